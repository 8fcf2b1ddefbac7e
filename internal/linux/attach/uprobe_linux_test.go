package attach

import (
	"errors"
	"fmt"
	"strconv"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/amd64"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// TestUprobes attaches one program at the entry, the return, and an
// offset of work, the entry of other and an address in other, through
// uprobe_multi links and through per-site perf event links, and counts
// each site's firings exactly.
func TestUprobes(t *testing.T) {
	needBPF(t)
	path := buildFixture(t, false)
	work, workInsts := function(t, path, "work")
	other, otherInsts := function(t, path, "other")
	if len(workInsts) < 3 || len(otherInsts) < 2 {
		t.Fatalf("work has %d instructions and other %d", len(workInsts), len(otherInsts))
	}
	bothLinkKinds(t, func(t *testing.T, multi bool) {
		fx := startFixture(t, path)
		want5 := fx.run(t, 5)
		c := loadCounter(t, ebpf.Kprobe, UprobeAttachType(), 5, byCookie...)
		pid := fx.pid()
		sites := []*probe.UserSite{
			{PID: pid, Path: path, Addr: work.Value, Size: work.Size},
			{PID: pid, Path: path, Addr: work.Value, Size: work.Size, Return: true},
			{PID: pid, Path: path, Addr: work.Value, Size: work.Size, Offset: workInsts[2].Addr - work.Value},
			{PID: pid, Path: path, Addr: other.Value, Size: other.Size},
			{PID: pid, Path: path, Offset: otherInsts[1].Addr}, // function "-"
		}
		perf, tracefs := perfEvents(t), tracefsEntries(t)
		a, err := Uprobes(c.prog, sites, []uint64{0, 1, 2, 3, 4})
		if err != nil {
			t.Fatal(err)
		}
		wantLinks := 2 // entries, returns
		if !multi {
			wantLinks = len(sites)
		}
		if n := linksOf(t, c.id(t)); n != wantLinks {
			t.Errorf("%d links hold the program, want %d", n, wantLinks)
		}
		if got := fx.run(t, 5); got != want5 {
			t.Errorf("the traced fixture printed %q, untraced %q", got, want5)
		}
		fx.run(t, 2)
		if diff := cmp.Diff([]uint64{7, 7, 7, 14, 14}, c.read(t)); diff != "" {
			t.Errorf("counts by site (-want +got):\n%s", diff)
		}

		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if err := a.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		fx.run(t, 3)
		if diff := cmp.Diff([]uint64{7, 7, 7, 14, 14}, c.read(t)); diff != "" {
			t.Errorf("counts after Close (-want +got):\n%s", diff)
		}
		if n := linksOf(t, c.id(t)); n != 0 {
			t.Errorf("%d links hold the program after Close", n)
		}
		if n := perfEvents(t); n != perf {
			t.Errorf("%d perf events open after Close, %d before", n, perf)
		}
		if s := tracefsEntries(t); s != tracefs {
			t.Errorf("tracefs probe entries were %q, now %q", tracefs, s)
		}
	})
}

// TestUprobeBoundary checks that an offset inside an instruction is
// refused, naming the boundaries either side, before anything is
// attached.
func TestUprobeBoundary(t *testing.T) {
	needBPF(t)
	path := buildFixture(t, false)
	work, insts := function(t, path, "work")
	mid, below, above := midInstruction(t, work, insts)
	fx := startFixture(t, path)
	want := fx.run(t, 3)
	c := loadCounter(t, ebpf.Kprobe, UprobeAttachType(), 2, byCookie...)
	sites := []*probe.UserSite{
		{PID: fx.pid(), Path: path, Addr: work.Value, Size: work.Size},
		{PID: fx.pid(), Path: path, Addr: work.Value, Size: work.Size, Offset: mid},
	}
	a, err := Uprobes(c.prog, sites, []uint64{0, 1})
	if err == nil {
		a.Close()
		t.Fatalf("Uprobes at work+%#x attached", mid)
	}
	var se *siteError
	var be *boundaryError
	if !errors.As(err, &se) || se.Index != 1 || !errors.As(err, &be) {
		t.Fatalf("Uprobes at work+%#x = %v, want a boundary error for site 1", mid, err)
	}
	wantErr := fmt.Sprintf("work+%#x: offset %#x is not an instruction boundary (nearest boundaries: %#x and %#x)", mid, mid, below, above)
	if err.Error() != wantErr {
		t.Errorf("Uprobes:\n got %s\nwant %s", err, wantErr)
	}
	if n := linksOf(t, c.id(t)); n != 0 {
		t.Errorf("%d links hold the program", n)
	}
	if got := fx.run(t, 3); got != want {
		t.Errorf("the fixture printed %q, before %q", got, want)
	}
	if diff := cmp.Diff([]uint64{0, 0}, c.read(t)); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}

	// Sites that cannot be checked are refused too, and a syscall
	// instruction.
	raw, rawInsts := function(t, path, "raw_getppid")
	var sysOff uint64
	for _, in := range rawInsts {
		if in.Len == 2 && in.Addr > raw.Value {
			sysOff = in.Addr - raw.Value
		}
	}
	locked, lockedInsts := function(t, path, "locked")
	lockedCode := codeOf(t, path, locked)
	var lockOff uint64
	for _, in := range lockedInsts {
		if _, ok := amd64.UprobeRefusedPrefix(lockedCode[in.Addr-locked.Value:]); ok {
			lockOff = in.Addr - locked.Value
		}
	}
	if lockOff == 0 {
		t.Fatal("the fixture's locked has no lock-prefixed instruction")
	}
	for _, tt := range []struct {
		site probe.UserSite
		want string
	}{
		{probe.UserSite{Path: path, Addr: raw.Value, Size: raw.Size, Offset: sysOff}, fmt.Sprintf("raw_getppid+%#x: offset %#x is a syscall instruction, which a uprobe cannot trace: the traced process would crash", sysOff, sysOff)},
		{probe.UserSite{Path: path, Addr: locked.Value, Size: locked.Size, Offset: lockOff}, fmt.Sprintf("locked+%#x: offset %#x is an instruction with a lock prefix, which uprobes refuse", lockOff, lockOff)},
		{probe.UserSite{Path: path, Addr: work.Value, Size: work.Size, Offset: 2, Return: true}, "work:return: a return probe goes on a function's entry, not at an offset"},
		{probe.UserSite{Path: path, Offset: 1}, path + ":0x1: the address is in no function of " + path + ", so whether an instruction starts there cannot be checked"},
		{probe.UserSite{Path: path + ".none", Addr: work.Value, Size: work.Size}, path + ".none: no such file or directory"},
	} {
		_, err := Uprobes(c.prog, []*probe.UserSite{&tt.site}, []uint64{0})
		if err == nil || !errors.As(err, &se) || err.Error() != tt.want {
			t.Errorf("Uprobes(%+v) = %v, want %q", tt.site, err, tt.want)
		}
	}
}

// TestUprobesLibrary attaches in a shared library the process maps, at
// sites the pid provider makes: getpid's entry, return and ret
// instruction (past its syscall), which the fixture runs once per line
// it reads.
func TestUprobesLibrary(t *testing.T) {
	needBPF(t)
	fx := startFixture(t, buildFixture(t, false))
	pid := strconv.Itoa(fx.pid())
	cat, err := probe.Live(probe.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := cat.Match(probe.Desc{Provider: "pid" + pid, Module: "libc.so.6", Function: "getpid"})
	if err != nil || len(ps) < 3 {
		t.Skipf("no pid%s:libc.so.6:getpid: probes: %v", pid, err)
	}
	sym, insts := function(t, ps[0].Detail.(*probe.UserSite).Path, "getpid")
	var retOff uint64
	for _, in := range insts {
		if in.Op == amd64.Ret {
			retOff = in.Addr - sym.Value
			break
		}
		if in.Op != amd64.Plain {
			t.Skipf("getpid branches before its ret: %v", insts)
		}
	}
	var entry, ret, last *probe.UserSite
	for _, p := range ps {
		s := p.Detail.(*probe.UserSite)
		switch {
		case p.Name == "entry":
			entry = s
		case p.Name == "return":
			ret = s
		case s.Offset == retOff:
			last = s
		}
	}
	c := loadCounter(t, ebpf.Kprobe, UprobeAttachType(), 3, byCookie...)
	a, err := Uprobes(c.prog, []*probe.UserSite{entry, ret, last}, []uint64{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for range 4 {
		fx.run(t, 1)
	}
	if diff := cmp.Diff([]uint64{4, 4, 4}, c.read(t)); diff != "" {
		t.Errorf("counts of getpid's entry, return and +%#x (-want +got):\n%s", retOff, diff)
	}
}
