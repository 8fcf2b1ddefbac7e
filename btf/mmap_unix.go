//go:build linux || freebsd || darwin || netbsd || openbsd

package btf

import (
	"errors"
	"os"
	"syscall"
)

// mmap maps a file read-only. MAP_PRIVATE, as sysfs allows no other
// mapping of /sys/kernel/btf/vmlinux.
func mmap(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, errors.New("cannot map")
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
}

func unmap(b []byte) { syscall.Munmap(b) }
