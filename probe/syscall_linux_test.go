//go:build linux

package probe

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSyscallTableAgreesWithTracefs types every system call's entry
// arguments twice from the running kernel: as root where tracefs is
// mounted, from its format files, and as anyone else, or root without
// tracefs, from the table of the formats (the provider pointed at no
// events directory). Both must give -lv the same types; where they do
// not, the table is older than the kernel: regenerate it.
func TestSyscallTableAgreesWithTracefs(t *testing.T) {
	if _, err := os.ReadFile("/sys/kernel/tracing/events/syscalls/sys_enter_read/format"); err != nil {
		t.Skipf("tracefs's syscall formats cannot be read (they are root's, where tracefs is mounted): %v", err)
	}
	cfg := btfTypes(t)
	withFS, err := Live(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sys := withFS.byName["syscall"].(*syscallProvider)
	noFS := New(&syscallProvider{k: sys.k, isCall: sys.isCall, handlers: sys.handlers, table: sys.table})
	args := func(c *Catalog) map[string][]string {
		m := map[string][]string{}
		err := c.Walk(Desc{"syscall", "", "", "entry"}, func(p *Probe) bool {
			ts, err := p.Args()
			if err != nil {
				t.Errorf("%v: %v", p, err)
			}
			s := []string{}
			for _, a := range ts {
				if a == nil {
					s = append(s, "(unknown)")
					continue
				}
				s = append(s, a.String())
			}
			m[p.Function] = s
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	want, got := args(withFS), args(noFS)
	if sys.events == "" {
		t.Fatal("the live catalog did not find tracefs's syscall events")
	}
	if len(want) < 300 {
		t.Fatalf("syscall:::entry matches %d probes", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("syscall:::entry's argument types (-tracefs +table):\n%s", diff)
	}
	if r := strings.Join(got["read"], ", "); r != "unsigned int, char *, size_t" {
		t.Errorf("syscall::read:entry's arguments from the table: %s", r)
	}
}
