//go:build linux && !amd64 && !arm64

package dtrace

import (
	"fmt"
	"runtime"
)

// breakpoint is empty where kdtrace knows no breakpoint instruction.
var breakpoint []byte

// trapPC refuses: only -x evaltime=exec stops a process here.
func trapPC(pid int) (uint64, error) {
	return 0, fmt.Errorf("stopping past exec is not supported on %s (use -x evaltime=exec)", runtime.GOARCH)
}

// setPC refuses, as trapPC.
func setPC(pid int, pc uint64) error {
	_, err := trapPC(pid)
	return err
}
