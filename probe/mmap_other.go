//go:build !unix

package probe

import (
	"errors"
	"os"
)

func mmap(*os.File, int64) ([]byte, error) { return nil, errors.New("cannot map") }

func munmap([]byte) {}
