//go:build !(linux || freebsd || darwin || netbsd || openbsd)

package btf

import (
	"errors"
	"os"
)

// mmap fails; files are then read into memory.
func mmap(*os.File, int64) ([]byte, error) { return nil, errors.New("cannot map") }

func unmap([]byte) {}
