// Command kdtrace-debuginfod makes one download for kdtrace from a
// debuginfod server. Users do not run it themselves: kdtrace runs it,
// found beside its own executable or in $PATH, for each file it
// downloads, so that net/http and crypto/tls, which a download needs,
// and their initialisation, which every run of a program linking them
// pays for, stay out of kdtrace, as git keeps libcurl out of git in
// git-remote-https.
//
// Usage:
//
//	kdtrace-debuginfod URL
//
// It GETs URL, writes the body to its descriptor 3, and reports what
// happens on its standard output in the protocol of
// internal/debuginfod/wire. kdtrace holds the other end of its standard
// input, a pipe never written: when that ends, kdtrace has ended, and
// so does the download. The exit status is 0 when the download's end,
// whatever it was, could be reported; else 1, or 2 for bad usage (no
// URL, or no file to write as descriptor 3).
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/internal/debuginfod/transfer"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kdtrace-debuginfod URL (kdtrace runs it, with the file to write as descriptor 3)")
		os.Exit(2)
	}
	if !writableFile(3) {
		fmt.Fprintln(os.Stderr, "kdtrace-debuginfod: descriptor 3 is no regular file open for writing (kdtrace opens there the file to write)")
		os.Exit(2)
	}
	body := os.NewFile(3, "the file to write")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	if err := transfer.Run(ctx, os.Args[1], body, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "kdtrace-debuginfod: %v\n", err)
		os.Exit(1)
	}
}

// writableFile reports whether fd is a regular file open for writing.
// That it is open is not enough: the runtime opens files of its own
// (cgroup limits) at the lowest free descriptors when it starts.
func writableFile(fd int) bool {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	return err == nil && flags&unix.O_ACCMODE != unix.O_RDONLY
}
