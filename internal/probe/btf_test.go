//go:build linux

package probe

import (
	"os"
	"path/filepath"
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

// TestLiveFuncsFromTypes checks that the kernel's functions are listed
// from the BTF the checker's types were read from, not by reading the
// file again: a fake root's vmlinux is read as the types, then replaced
// by a file that is no BTF; the functions still come from the types.
func TestLiveFuncsFromTypes(t *testing.T) {
	data, err := os.ReadFile("/sys/kernel/btf/vmlinux")
	if err != nil {
		t.Skipf("the running kernel has no BTF: %v", err)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "sys/kernel/btf")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, KernelModule)
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := btf.Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Replaced, not rewritten: the types may map the file.
	if err := os.WriteFile(file+".new", []byte("not BTF"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(file+".new", file); err != nil {
		t.Fatal(err)
	}
	c, err := Live(Config{Root: root, Types: func(module string) (KernelTypes, error) {
		if module == KernelModule {
			return k, nil
		}
		return nil, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Match(Desc{"fbt", "vmlinux", "vfs_read", "entry"})
	if err != nil || len(ps) != 1 {
		t.Errorf("fbt:vmlinux:vfs_read:entry: %v, %v; want the probe, listed from the types", ps, err)
	}
}
