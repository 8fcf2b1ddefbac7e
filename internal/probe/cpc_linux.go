//go:build linux

package probe

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// perfEventHas reports whether this machine can count events of a perf
// type and config: whether it opens a counter of them on this process.
func perfEventHas(typ uint32, config uint64) bool {
	attr := unix.PerfEventAttr{Type: typ, Config: config, Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Bits: unix.PerfBitDisabled}
	fd, err := unix.PerfEventOpen(&attr, 0, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}
