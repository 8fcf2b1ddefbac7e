//go:build linux || freebsd || darwin || netbsd || openbsd

package debuginfo

import (
	"os"
	"syscall"
)

// mmapFile maps a file read-only, so that a 600 MB vmlinux costs only
// the pages the scanner touches, and the kernel may drop them again.
func mmapFile(f *os.File, size int64) ([]byte, error) {
	if size == 0 || int64(int(size)) != size {
		return nil, nil
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

func munmap(b []byte) error {
	if b == nil {
		return nil
	}
	return syscall.Munmap(b)
}
