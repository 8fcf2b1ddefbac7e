//go:build unix

package dtrace

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"

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

// A Process is a process the handle created (Create, dtrace -c) or
// grabbed (Grab, dtrace -p). Tracing.Run sets created processes
// running once BEGIN has fired, and stops when every process has
// exited; Handle.Close kills the created processes still alive, as
// dtrace_close does, and leaves grabbed ones be.
type Process struct {
	pid     int
	created bool
	cmd     *exec.Cmd // of a created process

	// A created process waits, stopped, for one value on run: true
	// sets it running, false kills it. A grabbed one ignores it.
	run  chan bool
	sent bool // a value was sent on run

	done  chan struct{}    // closed when it has exited, or its watch ended
	state *os.ProcessState // how a created process ended
	stop  func()           // ends a grabbed process's watch
}

// Pid returns the process's ID.
func (p *Process) Pid() int { return p.pid }

// Grab makes process pid the target of the programs compiled next
// ($target), as dtrace -p: its USDT providers join the catalog, and
// Tracing.Run stops when it exits. Unlike dtrace, kdtrace does not
// stop the process while it compiles and enables. The error is
// dtrace's.
func (h *Handle) Grab(pid int) error {
	if err := unix.Kill(pid, 0); err != nil && err != unix.EPERM {
		return fmt.Errorf("failed to grab pid %d: %s", pid, strerror(err))
	}
	if err := h.setTarget(pid); err != nil {
		return err
	}
	for _, p := range h.procs {
		if p.pid == pid {
			return nil
		}
	}
	h.procs = append(h.procs, &Process{pid: pid, done: make(chan struct{})})
	return nil
}

// Create starts cmd, which must not have been started, as dtrace -c
// does: the process is stopped before its program runs, and becomes
// the target of the programs compiled next ($target), so that
// pid$target probes are made from its objects. Where it stops is the
// evaltime option's: exec, at its first instruction, with only the
// program and the dynamic linker mapped; preinit and postinit (the
// default), at the program's entry point, with the libraries it links
// loaded and initialised; main, at main (the entry point where the
// program has no symbol main). Tracing.Run sets it running; if it is
// still alive at Handle.Close, it is killed. Create sets
// cmd.SysProcAttr, and cmd.Env when it is nil: kdtrace's environment
// as dtrace passes it on (see environ); its Stdin, Stdout and
// Stderr are the process's. The error is dtrace's.
func (h *Handle) Create(cmd *exec.Cmd) (*Process, error) {
	at := stopAtEntry
	switch v, _ := h.opts.Value("evaltime"); v {
	case "exec":
		at = stopAtExec
	case "", "preinit", "postinit":
	case "main":
		at = stopAtMain
	default:
		return nil, fmt.Errorf("failed to set -x evaltime: Invalid value for specified option")
	}
	if cmd.Env == nil {
		cmd.Env = slices.Clone(h.environ())
	}
	p, err := create(cmd, at)
	if err != nil {
		return nil, err
	}
	h.procs = append(h.procs, p)
	if err := h.setTarget(p.pid); err != nil {
		return nil, err
	}
	return p, nil
}

// stopAt says where Create stops a process.
type stopAt int

const (
	stopAtExec stopAt = iota
	stopAtEntry
	stopAtMain
)

// startError is dtrace's message for a command that cannot be run.
func startError(cmd *exec.Cmd, err error) error {
	cause := err
	var pe *os.PathError
	switch {
	case errors.Is(err, exec.ErrNotFound), cmd.Path == "":
		cause = syscall.ENOENT
	case errors.As(err, &pe):
		cause = pe.Err
	}
	return fmt.Errorf("failed to execute %s: %s", cmd.Args[0], strerror(cause))
}

// setTarget makes pid $target, and brings its USDT providers into the
// catalog if it is made already.
func (h *Handle) setTarget(pid int) error {
	h.target = pid
	if h.ready && h.catalog != nil {
		return h.catalog.Grab(pid)
	}
	return nil
}

// startProcesses sets the created processes running and watches every
// process; each is sent on the channel returned when it exits. It
// returns how many it watches.
func (h *Handle) startProcesses() (<-chan *Process, int) {
	exits := make(chan *Process, len(h.procs))
	for _, p := range h.procs {
		if p.created {
			p.resume(true)
		} else if p.stop == nil {
			p.stop = watch(p)
		}
		go func() {
			<-p.done
			exits <- p
		}()
	}
	return exits, len(h.procs)
}

// resume sends run its one value: true sets a created process running,
// false kills it.
func (p *Process) resume(run bool) {
	if p.created && !p.sent {
		p.sent = true
		p.run <- run
	}
}

// exitNotice is dtrace's notice of the process's end. Of a grabbed
// process, which is not kdtrace's child, the status cannot be had.
func (p *Process) exitNotice() string {
	if p.state != nil {
		if ws, ok := p.state.Sys().(syscall.WaitStatus); ok {
			switch {
			case ws.Signaled():
				return fmt.Sprintf("pid %d terminated by %s", p.pid, unix.SignalName(ws.Signal()))
			case ws.ExitStatus() != 0:
				return fmt.Sprintf("pid %d exited with status %d", p.pid, ws.ExitStatus())
			}
		}
	}
	return fmt.Sprintf("pid %d has exited", p.pid)
}

// closeProcesses kills the created processes still alive, waiting until
// they are reaped, and ends the watch of grabbed ones, as dtrace_close.
func (h *Handle) closeProcesses() {
	for _, p := range h.procs {
		if !p.created {
			if p.stop != nil {
				p.stop()
			} else {
				close(p.done)
			}
			<-p.done
			continue
		}
		if p.sent {
			// Running. Signal goes through the process's pidfd, which
			// cannot reach another process that took its pid.
			p.cmd.Process.Signal(os.Kill)
		}
		p.resume(false)
		<-p.done
	}
	h.procs = nil
}
