//go:build unix

package probe

import (
	"errors"
	"os"
	"syscall"
)

func mmap(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, errors.New("cannot map")
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
}

func munmap(b []byte) { syscall.Munmap(b) }
