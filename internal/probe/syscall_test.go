package probe

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// TestSyscallArgsOrder checks where the syscall provider finds a call's
// entry arguments: tracefs's format first, then the architecture's
// table, then __do_sys_'s BTF prototype, else none.
func TestSyscallArgsOrder(t *testing.T) {
	events := t.TempDir()
	format := "name: sys_enter_waitid\nformat:\n" +
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" +
		"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n" +
		"\tfield:int which;\toffset:16;\tsize:8;\tsigned:0;\n"
	if err := os.MkdirAll(filepath.Join(events, "sys_enter_waitid"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(events, "sys_enter_waitid", "format"), []byte(format), 0o644); err != nil {
		t.Fatal(err)
	}
	table := map[string][]string{
		"waitid": {"unsigned int a", "unsigned int b"}, // tracefs's format wins
		"read":   {"unsigned int fd", "char * buf", "size_t count"},
	}
	lookup := func(name string) ([]string, bool) { d, ok := table[name]; return d, ok }
	tests := []struct {
		name      string
		eventDirs []string
		table     func(string) ([]string, bool)
		want      map[string]string
	}{
		{"tracefs, table, BTF", []string{filepath.Join(events, "nosuch"), events}, lookup, map[string]string{
			"waitid": "[int]",
			"read":   "[unsigned int char * size_t]",
			"openat": "[int char * int unsigned short]", // __do_sys_openat
			"wait4":  "[]",
		}},
		{"table, BTF", nil, lookup, map[string]string{
			"waitid": "[unsigned int unsigned int]",
			"read":   "[unsigned int char * size_t]",
			"openat": "[int char * int unsigned short]",
			"wait4":  "[]",
		}},
		{"BTF", nil, nil, map[string]string{
			"waitid": "[]",
			"read":   "[]",
			"openat": "[int char * int unsigned short]",
			"wait4":  "[]",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(&syscallProvider{k: testKernel(t), eventDirs: tt.eventDirs, table: tt.table})
			got := map[string]string{}
			err := c.Walk(Desc{"syscall", "", "", "entry"}, func(p *Probe) bool {
				args, err := p.Args()
				if err != nil {
					t.Errorf("%v: %v", p, err)
				}
				var s []string
				for _, a := range args {
					s = append(s, a.String())
				}
				got[p.Function] = "[" + strings.Join(s, " ") + "]"
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("syscall:::entry's arguments (-want +got):\n%s", diff)
			}
		})
	}
}

// anyTypes has a type of every name.
type anyTypes struct{}

func (anyTypes) LookupFunc(string) (*types.Func, []string, error) { return nil, nil, nil }
func (anyTypes) LookupType(string) (types.Type, error)            { return types.Long, nil }

// TestAMD64SyscallTable checks the generated table: sorted, as its
// lookup needs, and each declaration of the form parseCType reads.
func TestAMD64SyscallTable(t *testing.T) {
	if !slices.IsSortedFunc(amd64SyscallArgs[:], func(a, b syscallDecls) int { return strings.Compare(a.name, b.name) }) {
		t.Error("amd64SyscallArgs is not sorted by name")
	}
	for i, c := range amd64SyscallArgs {
		if i > 0 && amd64SyscallArgs[i-1].name == c.name {
			t.Errorf("amd64SyscallArgs has %s twice", c.name)
		}
		for _, d := range c.decls {
			if parseCType(d, anyTypes{}) == nil {
				t.Errorf("%s: cannot read the declaration %q", c.name, d)
			}
		}
	}
	for _, tt := range []struct {
		name  string
		decls []string
		ok    bool
	}{
		{"read", []string{"unsigned int fd", "char * buf", "size_t count"}, true},
		{"execve", []string{"const char * filename", "const char *const * argv", "const char *const * envp"}, true},
		{"getpid", nil, true},
		{"ni_syscall", nil, false},
		{"zzz", nil, false},
	} {
		decls, ok := syscallTable("amd64")(tt.name)
		if ok != tt.ok || !slices.Equal(decls, tt.decls) {
			t.Errorf("amd64's %s: %q, %v; want %q, %v", tt.name, decls, ok, tt.decls, tt.ok)
		}
	}
}
