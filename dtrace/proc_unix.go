//go:build unix

package dtrace

import (
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"
)

// processGroup returns the process group and session IDs, for $pgid and
// $sid.
func processGroup() (pgid, sid string) {
	g := unix.Getpgrp()
	s, err := unix.Getsid(0)
	if err != nil {
		s = 0
	}
	return strconv.Itoa(g), strconv.Itoa(s)
}

// Grab makes process pid the target of the programs compiled next
// ($target), as dtrace -p: its USDT providers join the catalog. dtrace
// stops the process; kdtrace, which has no runtime yet, only checks
// that it exists. The error is dtrace's.
func (h *Handle) Grab(pid int) error {
	if err := unix.Kill(pid, 0); err != nil && err != unix.EPERM {
		return fmt.Errorf("failed to grab pid %d: %s", pid, strerror(err))
	}
	h.target = pid
	if h.ready && h.catalog != nil {
		return h.catalog.Grab(pid)
	}
	return nil
}
