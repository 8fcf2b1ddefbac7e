package dof_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

func TestSavedRoundTrip(t *testing.T) {
	saved := &dof.Saved{
		BuildIDs:     []dof.BuildID{{"vmlinux", "eb4fbcd037e7253717950bf2b93bd5566f47c56f"}, {"ext4", "00ff"}},
		Objects:      []dof.BuildID{{"a.out", "0c5f3b"}, {"libc.so.6", "61ab"}},
		Options:      []dof.SavedOption{{"quiet", ""}, {"bufsize", "8m"}, {"odd name", "a \"b\"\n\tc"}},
		Target:       []dof.TargetSlot{{ECB: 0, Action: -1, Int: 0}, {ECB: 0, Action: 1, Int: 2}},
		TargetProbes: []int{0},
		Aggregations: []dof.SavedAggregation{{0, "count"}, {1, "_"}},
	}
	p := &dof.Program{ECBs: []dof.ECB{{
		Probe: dof.ProbeSpec{Provider: "syscall", Function: "read", Name: "entry"},
		Pred:  &dof.DIFO{Code: []uint32{0x25000001, 0x23000001}, Ints: []uint64{7}},
	}}}
	b, err := dof.Write(p, &dof.Options{Comments: "kdtrace", Saved: saved})
	if err != nil {
		t.Fatal(err)
	}
	f, err := dof.Read(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sec *dof.Sec
	for i := range f.Sections {
		if f.Sections[i].Type == dof.SectSaved {
			sec = &f.Sections[i]
		}
	}
	if sec == nil {
		t.Fatal("no saved program section written")
	}
	if sec.Loaded() || sec.Offset < f.Header.LoadSz {
		t.Errorf("saved program section %+v is loadable or within dofh_loadsz %d", *sec, f.Header.LoadSz)
	}
	got, err := f.Saved()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(saved, got); d != "" {
		t.Errorf("saved section (-wrote +read):\n%s", d)
	}
	// The kernel's side takes the file as it takes one without it.
	if _, err := enabling.Load(b, nil); err != nil {
		t.Errorf("enabling.Load: %v", err)
	}
	plain, err := dof.Write(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := dof.Read(plain, nil); f != nil {
		if s, err := f.Saved(); s != nil || err != nil {
			t.Errorf("a file without the section: Saved() = %v, %v", s, err)
		}
	}
}

func TestDecodeSavedErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "starts"},
		{"kdtrace-saved 2\n", "starts"},
		{"kdtrace-saved 1\nbuildid \"vmlinux\"\n", "line 2"},
		{"kdtrace-saved 1\nbuildid \"a\" \"b\" \"c\"\n", "trailing"},
		{"kdtrace-saved 1\noption \"a\"\"b\"\n", "separated"},
		{"kdtrace-saved 1\ntarget 1 x 2\n", "line 2"},
		{"kdtrace-saved 1\n\nbuildid \"a\" \"b\"\n", "empty line 2"},
		{"kdtrace-saved 1\nrelocate 1\n", "unknown record"},
		{"kdtrace-saved 1\naggregation x \"a\"\n", "line 2"},
		{"kdtrace-saved 1\naggregation 1 a\n", "line 2"},
		{"kdtrace-saved 1\nobject \"a.out\"\n", "line 2"},
		{"kdtrace-saved 1\ntargetprobe x\n", "line 2"},
		{"kdtrace-saved 1\ntargetprobe -1\n", "ECB -1"},
	} {
		_, err := dof.DecodeSaved([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeSaved(%q) = %v, want an error with %q", c.in, err, c.want)
		}
	}
}

func TestTargetSlotDIFO(t *testing.T) {
	d := &dof.DIFO{Ints: []uint64{1, 2}}
	p := &dof.Program{ECBs: []dof.ECB{{Pred: d, Actions: []dof.Action{{}, {DIFO: d}}}}}
	for _, c := range []struct {
		s  dof.TargetSlot
		ok bool
	}{
		{dof.TargetSlot{0, -1, 1}, true},
		{dof.TargetSlot{0, 1, 0}, true},
		{dof.TargetSlot{0, 0, 0}, false}, // an action without DIFO
		{dof.TargetSlot{0, 1, 2}, false},
		{dof.TargetSlot{1, -1, 0}, false},
		{dof.TargetSlot{0, -2, 0}, false},
	} {
		got, err := c.s.DIFO(p)
		if (err == nil) != c.ok || c.ok && got != d {
			t.Errorf("%+v.DIFO() = %v, %v; want ok %v", c.s, got, err, c.ok)
		}
	}
}
