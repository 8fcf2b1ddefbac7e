//go:build !(linux || freebsd || darwin || netbsd || openbsd)

package debuginfo

import "os"

// mmapFile reports no mapping; sections are then read into memory.
func mmapFile(*os.File, int64) ([]byte, error) { return nil, nil }

func munmap([]byte) error { return nil }
