//go:build unix

package mmap

import (
	"os"
	"syscall"
)

// Map maps the first size bytes of f read-only and private: sysfs
// files such as /sys/kernel/btf/vmlinux allow no shared mapping.
func Map(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, ErrUnsupported
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
}

// Unmap releases a mapping Map made; nil is no mapping.
func Unmap(b []byte) error {
	if b == nil {
		return nil
	}
	return syscall.Munmap(b)
}
