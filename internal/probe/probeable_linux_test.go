//go:build linux

package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/ksym"
)

// TestLiveFBTProbeable matches fbt globs over a fake root whose kernel
// lists its functions in kallsyms: vfs_set_acl_prepare_kgid is notrace
// and vfs_caches_init init code (ftrace lists neither), vfs_nokprobe is
// on the kprobe blacklist, and a module has a function of a kernel
// function's name.
func TestLiveFBTProbeable(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		path = filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/kallsyms", "ffffffff81000000 T vfs_read\n"+
		"ffffffff81000100 T vfs_write\n"+
		"ffffffff81000200 T vfs_set_acl_prepare_kgid\n"+
		"ffffffff81000300 T vfs_nokprobe\n"+
		"ffffffff83000000 T vfs_caches_init\n"+
		"ffffffffc0000000 t vfs_read\t[mod]\n"+
		"ffffffffc0000100 t mod_only\t[mod]\n")
	write("proc/modules", "mod 16384 0 - Live 0xffffffffc0000000\n")
	write("sys/kernel/debug/tracing/available_filter_functions", "vfs_read\nvfs_write\nvfs_nokprobe\nmod_only [mod]\n")
	write("sys/kernel/debug/kprobes/blacklist", "0xffffffff81000300-0xffffffff81000380\tvfs_nokprobe\n")

	match := func(d Desc) []string {
		t.Helper()
		c, err := Live(Config{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		ps, err := c.Match(d)
		if err != nil {
			t.Fatalf("Match(%v): %v", d, err)
		}
		n, err := c.Count(d)
		if err != nil || n != len(ps) {
			t.Errorf("Count(%v) = %d, %v; Match found %d", d, n, err, len(ps))
		}
		return names(ps)
	}
	for _, tt := range []struct {
		name string
		d    Desc
		want []string
	}{
		{"glob", Desc{"fbt", "", "vfs_*", "entry"}, []string{"fbt:vmlinux:vfs_read:entry", "fbt:vmlinux:vfs_write:entry"}},
		{"every function", Desc{"fbt", "", "", "return"}, []string{
			"fbt:vmlinux:vfs_read:return", "fbt:vmlinux:vfs_write:return", "fbt:mod:mod_only:return"}},
		{"module", Desc{"fbt", "mod", "*", "entry"}, []string{"fbt:mod:mod_only:entry"}},
		// Named in full, a function the kernel refuses is still
		// matched: enabling it says why it cannot be probed.
		{"notrace named", Desc{"fbt", "", "vfs_set_acl_prepare_kgid", "entry"}, []string{"fbt:vmlinux:vfs_set_acl_prepare_kgid:entry"}},
		{"blacklisted named", Desc{"fbt", "vmlinux", "vfs_nokprobe", "entry"}, []string{"fbt:vmlinux:vfs_nokprobe:entry"}},
		{"module's named", Desc{"fbt", "mod", "vfs_read", "entry"}, []string{"fbt:mod:vfs_read:entry"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, match(tt.d)); diff != "" {
				t.Errorf("%v (-want +got):\n%s", tt.d, diff)
			}
		})
	}

	// /sys/kernel/tracing comes first; without the blacklist only
	// ftrace's list counts.
	write("sys/kernel/tracing/available_filter_functions", "vfs_write\nvfs_nokprobe\n")
	os.Remove(filepath.Join(root, "sys/kernel/debug/kprobes/blacklist"))
	want := []string{"fbt:vmlinux:vfs_write:entry", "fbt:vmlinux:vfs_nokprobe:entry"}
	if diff := cmp.Diff(want, match(Desc{"fbt", "", "vfs_*", "entry"})); diff != "" {
		t.Errorf("without the blacklist (-want +got):\n%s", diff)
	}

	// A list that cannot be parsed fails a glob over fbt, and nothing
	// that does not need it.
	write("sys/kernel/tracing/available_filter_functions", "vfs_write [mod\n")
	c, err := Live(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Match(Desc{"fbt", "", "vfs_*", "entry"}); err == nil || !strings.Contains(err.Error(), "bad line") {
		t.Errorf("fbt::vfs_*:entry with a bad list: %v", err)
	}
	if ps, err := c.Match(Desc{"fbt", "vmlinux", "vfs_read", "entry"}); err != nil || len(ps) != 1 {
		t.Errorf("fbt::vfs_read:entry with a bad list: %v, %v", names(ps), err)
	}

	// Without tracefs, every function is listed, as before.
	os.RemoveAll(filepath.Join(root, "sys/kernel/tracing"))
	os.RemoveAll(filepath.Join(root, "sys/kernel/debug"))
	want = []string{"fbt:vmlinux:vfs_read:entry", "fbt:vmlinux:vfs_write:entry", "fbt:vmlinux:vfs_set_acl_prepare_kgid:entry",
		"fbt:vmlinux:vfs_nokprobe:entry", "fbt:vmlinux:vfs_caches_init:entry"}
	if diff := cmp.Diff(want, match(Desc{"fbt", "vmlinux", "vfs_*", "entry"})); diff != "" {
		t.Errorf("without tracefs (-want +got):\n%s", diff)
	}
}

// BenchmarkReadProbeable reads a list of ftrace's size: the running
// kernel's own when it can be read, else one made of the functions in
// its kallsyms (some 60,000 names either way), with a blacklist of a
// thousand of them.
func BenchmarkReadProbeable(b *testing.B) {
	dir := b.TempDir()
	list := filepath.Join(dir, "available_filter_functions")
	if data, err := os.ReadFile("/sys/kernel/tracing/available_filter_functions"); err == nil {
		os.WriteFile(list, data, 0o644)
	} else {
		t, err := ksym.Kallsyms("/proc/kallsyms", "")
		if err != nil {
			b.Skip(err)
		}
		var names strings.Builder
		for s := range t.All() {
			if s.Func && s.Module == ksym.KernelModule {
				names.WriteString(s.Name + "\n")
			}
		}
		os.WriteFile(list, []byte(names.String()), 0o644)
	}
	data, _ := os.ReadFile(list)
	lines := strings.Split(string(data), "\n")
	var bl strings.Builder
	for i := 0; i < len(lines); i += len(lines)/1000 + 1 {
		bl.WriteString("0x0000000000000000-0x0000000000000000\t" + lines[i] + "\n")
	}
	blacklist := filepath.Join(dir, "blacklist")
	os.WriteFile(blacklist, []byte(bl.String()), 0o644)
	b.ReportMetric(float64(len(lines)), "lines")
	for b.Loop() {
		p, err := readProbeable([]string{dir}, blacklist)
		if err != nil || len(p.mods) == 0 {
			b.Fatal(p, err)
		}
	}
}
