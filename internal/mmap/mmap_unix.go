//go:build unix

package mmap

import (
	"io/fs"
	"os"
	"syscall"
)

// Map maps the first size bytes of f read-only and private: sysfs
// files such as /sys/kernel/btf/vmlinux allow no shared mapping. It
// leaves f as it was: f.Fd would put a file opened non-blocking back in
// blocking mode, two system calls that a mapping does not need.
func Map(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, ErrUnsupported
	}
	c, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var b []byte
	if cerr := c.Control(func(fd uintptr) { b, err = mmap(int(fd), size) }); cerr != nil {
		return nil, cerr
	}
	return b, err
}

func mmap(fd int, size int64) ([]byte, error) {
	return syscall.Mmap(fd, 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
}

// MapFile maps the whole file at path as Map does, opening it without
// an os.File: os.Open registers a sysfs file with the runtime's poller,
// four system calls that a mapping does not need. Its errors are the
// open's or the stat's, as *fs.PathError, and ErrUnsupported where the
// file cannot be mapped, for the caller to read it instead.
func MapFile(path string) ([]byte, error) {
	fd, err := ignoringEINTR(func() (int, error) {
		return syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if _, err := ignoringEINTR(func() (int, error) { return 0, syscall.Fstat(fd, &st) }); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	}
	if st.Size <= 0 || int64(int(st.Size)) != st.Size {
		return nil, ErrUnsupported
	}
	b, err := mmap(fd, st.Size)
	if err != nil {
		return nil, ErrUnsupported
	}
	return b, nil
}

// ignoringEINTR calls f until it is not interrupted by a signal, as
// package os does for the same calls.
func ignoringEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != syscall.EINTR {
			return n, err
		}
	}
}

// Unmap releases a mapping Map made; nil is no mapping.
func Unmap(b []byte) error {
	if b == nil {
		return nil
	}
	return syscall.Munmap(b)
}
