//go:build unix

package mmap

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMapPollable maps a file that os.Open puts in non-blocking mode
// and registers with the runtime's poller, as it does sysfs files,
// which must stay so: f.Fd would have made it blocking.
func TestMapPollable(t *testing.T) {
	const name = "/sys/kernel/btf/vmlinux"
	f, err := os.Open(name)
	if err != nil {
		t.Skipf("no sysfs file to map: %v", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	nonblocking := func() bool {
		t.Helper()
		var flags int
		c.Control(func(fd uintptr) { flags, err = fcntl(int(fd), syscall.F_GETFL) })
		if err != nil {
			t.Fatal(err)
		}
		return flags&syscall.O_NONBLOCK != 0
	}
	if !nonblocking() {
		t.Skipf("os.Open left %s blocking", name)
	}
	b, err := Map(f, fi.Size())
	if err != nil {
		t.Skipf("%s cannot be mapped: %v", name, err)
	}
	defer Unmap(b)
	if !nonblocking() {
		t.Error("Map made the file blocking")
	}
}

func fcntl(fd, cmd int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), uintptr(cmd), 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

func TestMapFile(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := MapFile(name)
	if err != nil || string(b) != "hello" {
		t.Fatalf("MapFile(%s) = %q, %v", name, b, err)
	}
	if err := Unmap(b); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want error
	}{
		{filepath.Join(dir, "missing"), fs.ErrNotExist},
		{dir, syscall.EISDIR},
		{empty, ErrUnsupported},
		{"/dev/null", ErrUnsupported}, // a size of 0, like procfs's and some sysfs files
	} {
		b, err := MapFile(tc.path)
		if !errors.Is(err, tc.want) || b != nil {
			t.Errorf("MapFile(%s) = %q, %v, want %v", tc.path, b, err, tc.want)
		}
		var pe *fs.PathError
		if tc.want != ErrUnsupported && (!errors.As(err, &pe) || pe.Path != tc.path) {
			t.Errorf("MapFile(%s): %v is not a *fs.PathError for the path", tc.path, err)
		}
	}
}
