//go:build unix

package main

import (
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
