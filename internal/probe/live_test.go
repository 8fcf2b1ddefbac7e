//go:build linux

package probe

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/ksym"
)

// liveCatalog returns the running system's catalog, skipping the test
// when the kernel has no BTF.
func liveCatalog(t testing.TB) *Catalog {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("the running kernel has no BTF: %v", err)
	}
	c, err := Live(Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLiveFBT(t *testing.T) {
	c := liveCatalog(t)
	ps, err := c.Match(Desc{"fbt", "", "vfs_read", "entry"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].String() != "fbt:vmlinux:vfs_read:entry" {
		t.Fatalf("Match(fbt::vfs_read:entry) = %v", names(ps))
	}
	site, ok := ps[0].Detail.(*KernelSite)
	if !ok || site.Function != "vfs_read" || site.Return {
		t.Errorf("fbt::vfs_read:entry Detail = %#v", ps[0].Detail)
	}
	entries, err := c.Count(Desc{"fbt", "", "", "entry"})
	if err != nil {
		t.Fatal(err)
	}
	returns, _ := c.Count(Desc{"fbt", "", "", "return"})
	if entries < 1000 || returns != entries {
		t.Errorf("fbt:::entry matches %d probes and fbt:::return %d; want the same thousands", entries, returns)
	}
	t.Logf("fbt:::entry matches %d probes", entries)
	vfs, _ := c.Match(Desc{"fbt", "", "vfs_*", "entry"})
	if len(vfs) < 10 {
		t.Errorf("fbt::vfs_*:entry matches %v", names(vfs))
	}
	for _, p := range vfs {
		if !strings.HasPrefix(p.Function, "vfs_") {
			t.Errorf("fbt::vfs_*:entry matched %v", p)
		}
	}
	if n, _ := c.Count(Desc{"fbt", "", "no_such_function_here", ""}); n != 0 {
		t.Errorf("fbt::no_such_function_here: matches %d probes", n)
	}
	if n, _ := c.Count(Desc{"kinst", "", "vfs_read", "5"}); n != 1 {
		t.Errorf("kinst::vfs_read:5 matches %d probes, want 1", n)
	}
}

func TestLiveSyscall(t *testing.T) {
	c := liveCatalog(t)
	for _, name := range []string{"read", "openat", "exit_group"} {
		ps, err := c.Match(Desc{"syscall", "", name, ""})
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 2 || ps[0].Name != "entry" || ps[1].Name != "return" {
			t.Errorf("syscall::%s: = %v", name, names(ps))
		}
	}
	info, err := c.Info(Desc{"syscall", "", "openat", "entry"})
	if err != nil {
		t.Fatal(err)
	}
	if info.Matches != 1 || info.Probe == nil {
		t.Fatalf("Info(syscall::openat:entry) = %+v", info)
	}
	// Without kernel types only the tracepoint's shape is known: four
	// arguments, from tracefs's format or x86-64's table of the
	// formats, or none.
	if n := len(info.Args); n != 4 && (n != 0 || runtime.GOARCH == "amd64") {
		t.Errorf("syscall::openat:entry has %d arguments, want 4 (or 0 without tracefs, but for x86-64)", n)
	}
}

func TestLiveCorpus(t *testing.T) {
	checkCorpus(t, liveCatalog(t))
}

// BenchmarkLiveLoad lists the running kernel's functions from its BTF:
// the cost of the first fbt or kinst description of a run.
func BenchmarkLiveLoad(b *testing.B) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		b.Skipf("the running kernel has no BTF: %v", err)
	}
	for b.Loop() {
		ls, err := liveFuncs("/sys/kernel/btf", "/proc/modules", func() (*ksym.Table, error) { return ksym.Kallsyms("/proc/kallsyms", "") }, func(path string) (*funcList, uint32, error) { return loadBTFFuncs(path, KernelModule, 0, nil) }, nil)
		if err != nil || ls[0].len() == 0 {
			b.Fatal(ls, err)
		}
	}
}

// BenchmarkLiveMatch matches descriptions after the first use.
func BenchmarkLiveMatch(b *testing.B) {
	c := liveCatalog(b)
	for _, d := range []Desc{
		{"fbt", "", "vfs_read", "entry"},
		{"", "", "vfs_read", "entry"},
		{Name: "BEGIN"},
		{Name: "tick-1sec"},
		{"syscall", "", "openat", "entry"},
		{"fbt", "", "vfs_*", "entry"},
	} {
		if _, err := c.Match(d); err != nil {
			b.Fatal(err)
		}
		b.Run(d.String(), func(b *testing.B) {
			for b.Loop() {
				c.Match(d)
			}
		})
	}
}

// BenchmarkLiveCount counts and asks about every fbt entry probe.
func BenchmarkLiveCount(b *testing.B) {
	c := liveCatalog(b)
	d := Desc{"fbt", "", "", "entry"}
	b.Run("Count", func(b *testing.B) {
		for b.Loop() {
			c.Count(d)
		}
	})
	b.Run("Info", func(b *testing.B) {
		for b.Loop() {
			c.Info(d)
		}
	})
	b.Run("Match", func(b *testing.B) {
		for b.Loop() {
			c.Match(d)
		}
	})
}
