//go:build linux

package probe

import (
	"os"
	"testing"

	"github.com/kdtrace/kdtrace/internal/btf"
)

// btfTypes gives a live catalog the running kernel's BTF, as the
// kdtrace command does.
func btfTypes(t testing.TB) Config {
	k, err := btf.Kernel()
	if err != nil {
		t.Skipf("the running kernel's BTF: %v", err)
	}
	return Config{Types: func(module string) (KernelTypes, error) {
		if module == KernelModule {
			return k, nil
		}
		m, err := btf.LoadModule(k, module)
		if err != nil {
			return nil, err
		}
		return m, nil
	}}
}

func TestLiveArgs(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skipf("the running kernel has no BTF: %v", err)
	}
	c, err := Live(btfTypes(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		desc Desc
		want []string
	}{
		// ssize_t vfs_read(struct file *, char __user *, size_t, loff_t *)
		{Desc{"fbt", "", "vfs_read", "entry"}, []string{"struct file *", "char *", "size_t", "loff_t *"}},
		{Desc{"fbt", "", "vfs_read", "return"}, []string{"int", "ssize_t"}},
		{Desc{"syscall", "", "openat", "return"}, []string{"long", "long"}},
	}
	for _, tt := range tests {
		info, err := c.Info(tt.desc)
		if err != nil {
			t.Fatalf("Info(%v): %v", tt.desc, err)
		}
		var got []string
		for _, a := range info.Args {
			if a == nil {
				got = append(got, "<nil>")
				continue
			}
			got = append(got, a.String())
		}
		if len(got) != len(tt.want) {
			t.Errorf("Info(%v).Args = %v, want %v", tt.desc, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("Info(%v).Args = %v, want %v", tt.desc, got, tt.want)
				break
			}
		}
	}
	// The tracepoint's format gives openat's arguments, when tracefs is
	// mounted.
	info, err := c.Info(Desc{"syscall", "", "openat", "entry"})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Args) == 4 {
		for i, want := range []string{"int", "const char *", "int", "umode_t"} {
			if a := info.Args[i]; a == nil || a.String() != want {
				t.Errorf("syscall::openat:entry args[%d] = %v, want %s", i, a, want)
			}
		}
	}
}
