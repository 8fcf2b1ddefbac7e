//go:build unix

package main

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

// grabProcess checks that process pid exists, as -p needs: dtrace grabs
// it; kdtrace, which has no runtime yet, only looks it up. The error is
// dtrace's.
func grabProcess(pid int) error {
	if err := unix.Kill(pid, 0); err != nil && err != unix.EPERM {
		return fmt.Errorf("failed to grab pid %d: %s", pid, strerror(err))
	}
	return nil
}
