package dtrace

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// create starts cmd traced, runs it to where at says, and returns it
// stopped there. One goroutine, locked to its thread, owns the process
// for its whole life: Linux takes ptrace requests only from the thread
// that traces, and kills a child with Pdeathsig when the thread that
// started it ends. It stops the process, waits for one value on run,
// detaches from it (true) or kills it (false), and reaps it.
func create(cmd *exec.Cmd, at stopAt) (*Process, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Ptrace = true
	// If kdtrace dies, even by SIGKILL, what it created dies too, as
	// dtrace's created processes do (the kill-on-last-close flag).
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	p := &Process{created: true, cmd: cmd, run: make(chan bool, 1), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		// The thread stays locked, and ends with the goroutine, so
		// that it lives exactly as long as the process it traces.
		runtime.LockOSThread()
		defer close(p.done)
		if err := cmd.Start(); err != nil {
			ready <- startError(cmd, err)
			return
		}
		p.pid = cmd.Process.Pid
		err := stopAtStart(p.pid, at)
		ready <- err
		if err != nil || !<-p.run {
			cmd.Process.Kill()
		} else if err := unix.PtraceDetach(p.pid); err != nil {
			// Only a process that died can refuse.
			cmd.Process.Kill()
		}
		cmd.Wait()
		p.state = cmd.ProcessState
	}()
	if err := <-ready; err != nil {
		<-p.done
		return nil, err
	}
	return p, nil
}

// stopAtStart waits for the process's stop at exec, where the kernel
// stops a child that asked to be traced, and from there runs it to a
// breakpoint at its entry point or main when at says so.
func stopAtStart(pid int, at stopAt) error {
	if err := waitTrap(pid); err != nil {
		return err
	}
	// A process left stopped by a tracer that died is killed.
	if err := unix.PtraceSetOptions(pid, unix.PTRACE_O_EXITKILL); err != nil {
		return fmt.Errorf("failed to control pid %d: %s", pid, strerror(err))
	}
	if at == stopAtExec {
		return nil
	}
	entry, err := auxvEntry(pid)
	if err != nil {
		return fmt.Errorf("failed to control pid %d: %v", pid, err)
	}
	addr := entry
	if at == stopAtMain {
		if main, ok := mainAddr(pid, entry); ok {
			addr = main
		}
	}
	if err := runTo(pid, addr); err != nil {
		return fmt.Errorf("failed to control pid %d: %v", pid, err)
	}
	return nil
}

// waitTrap waits for the process's next SIGTRAP stop, passing it the
// other signals it receives meanwhile; it says how the process ended
// if it ends first, as dtrace does.
func waitTrap(pid int) error {
	for {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
			if err == unix.EINTR {
				continue
			}
			return fmt.Errorf("failed to control pid %d: %s", pid, strerror(err))
		}
		switch {
		case ws.Exited():
			return fmt.Errorf("failed to control pid %d: process exited with status %d", pid, ws.ExitStatus())
		case ws.Signaled():
			return fmt.Errorf("failed to control pid %d: process died from signal %d", pid, ws.Signal())
		case ws.Stopped() && ws.StopSignal() == unix.SIGTRAP:
			return nil
		case ws.Stopped():
			if err := unix.PtraceCont(pid, int(ws.StopSignal())); err != nil {
				return fmt.Errorf("failed to control pid %d: %s", pid, strerror(err))
			}
		}
	}
}

// auxvEntry reads the process's entry point from its auxiliary vector.
func auxvEntry(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/auxv")
	if err != nil {
		return 0, err
	}
	// Pairs of words: a type, then its value.
	word := func(b []byte) uint64 {
		if strconv.IntSize == 32 {
			return uint64(binary.NativeEndian.Uint32(b))
		}
		return binary.NativeEndian.Uint64(b)
	}
	w := strconv.IntSize / 8
	for i := 0; i+2*w <= len(b); i += 2 * w {
		if word(b[i:]) == atEntry {
			return word(b[i+w:]), nil
		}
	}
	return 0, errors.New("no entry point in its auxiliary vector")
}

// mainAddr finds where main is in the process, from the symbols of
// its program, which is loaded entry minus its ELF entry from where it
// was linked.
func mainAddr(pid int, entry uint64) (uint64, bool) {
	f, err := elf.Open("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	for _, s := range append(syms, dyn...) {
		if s.Name == "main" && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			return s.Value + entry - f.Entry, true
		}
	}
	return 0, false
}

// runTo runs the stopped process until it reaches addr, through a
// breakpoint that is removed before it returns; the process is left
// stopped with addr's instruction not yet run.
func runTo(pid int, addr uint64) error {
	var orig [8]byte
	if _, err := unix.PtracePeekText(pid, uintptr(addr), orig[:]); err != nil {
		return fmt.Errorf("reading %#x: %s", addr, strerror(err))
	}
	trap := orig
	copy(trap[:], breakpoint)
	if _, err := unix.PtracePokeText(pid, uintptr(addr), trap[:]); err != nil {
		return fmt.Errorf("writing %#x: %s", addr, strerror(err))
	}
	for sig := 0; ; {
		if err := unix.PtraceCont(pid, sig); err != nil {
			return err
		}
		if err := waitTrap(pid); err != nil {
			return err
		}
		pc, err := trapPC(pid)
		if err != nil {
			return err
		}
		if pc == addr {
			break
		}
		// A SIGTRAP of the program's own, which it gets.
		sig = int(unix.SIGTRAP)
	}
	if _, err := unix.PtracePokeText(pid, uintptr(addr), orig[:]); err != nil {
		return fmt.Errorf("writing %#x: %s", addr, strerror(err))
	}
	return setPC(pid, addr)
}

// watch watches grabbed process p and closes p.done when it exits,
// through a pidfd, which becomes readable then, or by looking at /proc
// where the kernel has no pidfds. The function returned ends the watch.
func watch(p *Process) (stop func()) {
	fd, err := unix.PidfdOpen(p.pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return pollWatch(p)
	}
	// The runtime's poller waits for the pidfd, so that closing it
	// ends the wait.
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return pollWatch(p)
	}
	go func() {
		defer close(p.done)
		rc.Read(func(fd uintptr) bool {
			n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, 0)
			return n > 0 || err != nil && err != unix.EINTR
		})
	}()
	return func() { f.Close() }
}

// pollWatch watches p through /proc: it has exited when its entry is
// gone or a zombie's.
func pollWatch(p *Process) (stop func()) {
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
			if !alive(p.pid) {
				return
			}
		}
	}()
	return func() { close(quit) }
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) S ...: the state follows the last parenthesis.
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			return i+2 >= len(b) || b[i+2] != 'Z'
		}
	}
	return true
}

// atEntry is AT_ENTRY, the auxiliary vector's entry point of the
// program.
const atEntry = 9
