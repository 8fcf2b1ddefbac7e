//go:build !linux && !freebsd

package debuginfo

import (
	"fmt"
	"runtime"
)

// Kernel is not supported on this system; use Open with files.
func Kernel(Options) (*Set, error) {
	return nil, fmt.Errorf("finding the running kernel's debug info is not supported on %s", runtime.GOOS)
}
