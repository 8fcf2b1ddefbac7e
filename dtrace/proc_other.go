//go:build unix && !linux

package dtrace

import (
	"fmt"
	"os/exec"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// create refuses: kdtrace controls processes through Linux's ptrace.
func create(cmd *exec.Cmd, at stopAt) (*Process, error) {
	return nil, fmt.Errorf("failed to execute %s: creating a process to trace is not supported on %s", cmd.Args[0], runtime.GOOS)
}

// watch watches grabbed process p and closes p.done when it no longer
// exists. The function returned ends the watch.
func watch(p *Process) (stop func()) {
	quit := make(chan struct{})
	go func() {
		defer close(p.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if err := unix.Kill(p.pid, 0); err == unix.ESRCH {
				return
			}
		}
	}()
	return func() { close(quit) }
}
