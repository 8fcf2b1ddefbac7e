// Command stopwatch runs a tracer and times it from its start to its
// exit, reading a byte of /dev/zero every -every meanwhile, so that a
// probe on the read path (vfs_read) fires as soon as it is attached
// and a clause that exits on its first firing ends the run. It is
// guestattach's timer inside the guest, built static.
//
//	stopwatch [-every d] [-timeout d] command [arg ...]
//
// It prints one line, the wall time in milliseconds and the command's
// exit status (-1 if it was killed at -timeout), and the command's own
// output goes to stopwatch's standard error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"time"
)

func main() {
	every := flag.Duration("every", time.Millisecond, "time between trigger reads")
	timeout := flag.Duration("timeout", 5*time.Minute, "kill the command after this long")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: stopwatch [-every d] [-timeout d] command [arg ...]")
		os.Exit(2)
	}
	zero, err := os.Open("/dev/zero")
	if err != nil {
		fmt.Fprintln(os.Stderr, "stopwatch:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, flag.Arg(0), flag.Args()[1:]...)
	cmd.Stdout = os.Stderr
	cmd.Stderr = os.Stderr

	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "stopwatch:", err)
		os.Exit(1)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(*every)
	defer tick.Stop()
	buf := make([]byte, 1)
	for {
		select {
		case err := <-done:
			wall := time.Since(start)
			status := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				status = exit.ExitCode()
			} else if err != nil {
				fmt.Fprintln(os.Stderr, "stopwatch:", err)
				os.Exit(1)
			}
			fmt.Printf("%.3f %d\n", float64(wall.Microseconds())/1000, status)
			return
		case <-tick.C:
			// Each read is one vfs_read in the kernel.
			if _, err := zero.Read(buf); err != nil {
				fmt.Fprintln(os.Stderr, "stopwatch:", err)
				os.Exit(1)
			}
		}
	}
}
