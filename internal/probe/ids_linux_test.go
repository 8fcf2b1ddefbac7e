//go:build linux

package probe

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLiveIDsPrivileges lists the probes of two fake roots of one
// kernel: as root sees it, with tracefs (its syscall tracepoints and
// ftrace's list of the functions fbt may probe) and kallsyms's
// addresses, and as another user sees it, without tracefs, which is
// root's alone, and with kallsyms's addresses zeroed. A probe has the
// same ID in both, and the system calls are the same: the kernel's own
// (not chown16, a compat call of 32-bit programs), and not init_module,
// whose handler is a weak stub of a kernel built without modules.
func TestLiveIDsPrivileges(t *testing.T) {
	kallsyms := "ffffffff81000000 T vfs_read\n" +
		"ffffffff81000100 T vfs_write\n" +
		"ffffffff81000200 T notrace_fn\n" +
		"ffffffff81001000 T __x64_sys_read\n" +
		"ffffffff81001100 T __x64_sys_getpid\n" +
		"ffffffff81001200 W __x64_sys_init_module\n" +
		"ffffffff81001300 T __x64_sys_chown16\n" +
		"ffffffff81001400 T __x64_sys_ni_syscall\n" +
		"ffffffffc0000000 t __x64_sys_modcall\t[mod]\n"
	format := "name: sys_enter_read\nformat:\n\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n" +
		"\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
	root := func(privileged bool) string {
		dir := t.TempDir()
		write := func(path, text string) {
			t.Helper()
			path = filepath.Join(dir, path)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if privileged {
			write("proc/kallsyms", kallsyms)
			write("sys/kernel/tracing/available_filter_functions", "vfs_read\nvfs_write\n")
			write("sys/kernel/tracing/events/syscalls/sys_enter_read/format", format)
			write("sys/kernel/tracing/events/syscalls/sys_enter_getpid/format", "name: sys_enter_getpid\nformat:\n")
		} else {
			write("proc/kallsyms", strings.ReplaceAll(kallsyms, "ffffffff8100", "000000000000"))
		}
		return dir
	}
	arch := []string{"getpid", "init_module", "read"}
	list := func(privileged bool) (*Catalog, []*Probe) {
		c, err := Live(Config{Root: root(privileged), Syscalls: arch})
		if err != nil {
			t.Fatal(err)
		}
		var ps []*Probe
		if err := c.Walk(Desc{}, func(p *Probe) bool { ps = append(ps, p); return true }); err != nil {
			t.Fatal(err)
		}
		return c, ps
	}
	rootCat, rootProbes := list(true)
	userCat, userProbes := list(false)
	calls := func(ps []*Probe) []string {
		var s []string
		for _, p := range ps {
			if p.Provider == "syscall" && p.Name == "entry" {
				s = append(s, p.Function)
			}
		}
		return s
	}
	want := []string{"getpid", "read"}
	if diff := cmp.Diff(want, calls(rootProbes)); diff != "" {
		t.Errorf("root's system calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, calls(userProbes)); diff != "" {
		t.Errorf("another user's system calls (-want +got):\n%s", diff)
	}
	ids := func(c *Catalog, ps []*Probe) map[Desc]uint32 {
		m := map[Desc]uint32{}
		for _, p := range ps {
			m[p.Desc()] = c.ID(p)
		}
		return m
	}
	userIDs := ids(userCat, userProbes)
	for d, id := range ids(rootCat, rootProbes) {
		if userIDs[d] != id {
			t.Errorf("%v: ID %d for root, %d for another user", d, id, userIDs[d])
		}
	}
	// Root's list leaves out the functions ftrace does not list
	// (notrace_fn), another user's cannot: the only probes root does
	// not list are fbt's.
	rootIDs := ids(rootCat, rootProbes)
	extra := 0
	for _, p := range userProbes {
		if _, ok := rootIDs[p.Desc()]; !ok {
			extra++
			if p.Provider != "fbt" {
				t.Errorf("another user lists %v, root does not", p)
			}
		}
	}
	if extra == 0 {
		t.Error("root's list of the functions fbt may probe left none out")
	}
	// The tracepoint's format types read's argument where root can
	// read it.
	for _, p := range rootProbes {
		if p.Provider == "syscall" && p.Function == "read" && p.Name == "entry" {
			args, err := p.Args()
			if err != nil || len(args) != 1 {
				t.Errorf("syscall::read:entry's arguments: %v, %v; want the format's one", args, err)
			}
		}
	}
}
