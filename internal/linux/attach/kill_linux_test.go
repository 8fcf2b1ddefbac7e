package attach

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// childEnv, when set, makes TestAttachedChild the child of
// TestKillLeavesNothing: "fixture-path pid usdt(0|1)".
const childEnv = "KDTRACE_ATTACH_CHILD"

// TestKillLeavesNothing starts a child process that attaches programs
// of every kind that can run here (uprobes, USDT with a semaphore,
// syscalls, profile), kills it with SIGKILL, and checks that the kernel
// has released everything: the programs, their links, the semaphore's
// count, and no tracefs entries were ever made.
func TestKillLeavesNothing(t *testing.T) {
	needBPF(t)
	usdt := fileExists("/usr/include/x86_64-linux-gnu/sys/sdt.h") || fileExists("/usr/include/sys/sdt.h")
	fx := startFixture(t, buildFixture(t, usdt))
	want := fx.run(t, 4)
	tracefs := tracefsEntries(t)

	cmd := exec.Command(os.Args[0], "-test.run=^TestAttachedChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %t", childEnv, fx.path, fx.pid(), usdt))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var ids []ebpf.ProgramID
	var semAddr uint64
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f, ok := strings.CutPrefix(sc.Text(), "ready "); ok {
			var up, sys, prof uint32
			if _, err := fmt.Sscan(f, &up, &sys, &prof, &semAddr); err != nil {
				t.Fatalf("the child said %q: %v", sc.Text(), err)
			}
			ids = []ebpf.ProgramID{ebpf.ProgramID(up), ebpf.ProgramID(sys), ebpf.ProgramID(prof)}
			break
		}
	}
	if len(ids) == 0 {
		cmd.Wait()
		t.Fatal("the child did not attach")
	}
	cpus, _ := onlineCPUs()
	wantLinks := 2 + 1 + len(cpus) // work's entry and return, sys_enter, profile
	if usdt {
		wantLinks++ // the USDT probe's two points
		if !haveUprobeMulti() {
			wantLinks++ // one link each
		}
	}
	if n := linksOf(t, ids...); n != wantLinks {
		t.Errorf("the child holds %d links, want %d", n, wantLinks)
	}
	if usdt {
		if s := semaphore(t, fx.pid(), semAddr); s != 2 {
			t.Errorf("semaphore %d while the child is attached, want 2", s)
		}
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	gone := func() bool {
		for _, id := range ids {
			if programExists(id) {
				return false
			}
		}
		return linksOf(t, ids...) == 0
	}
	if !waitFor(gone) {
		t.Errorf("5 s after SIGKILL, the child's programs %v or %d links to them remain", ids, linksOf(t, ids...))
	} else {
		t.Logf("%d links and %d programs released %v after the child's end", wantLinks, len(ids), time.Since(killed).Round(time.Millisecond))
	}
	if usdt {
		if s := semaphore(t, fx.pid(), semAddr); s != 0 {
			t.Errorf("semaphore %d after the child's SIGKILL, want 0", s)
		}
	}
	if s := tracefsEntries(t); s != tracefs {
		t.Errorf("tracefs probe entries were %q, now %q", tracefs, s)
	}
	if got := fx.run(t, 4); got != want {
		t.Errorf("the fixture printed %q after the child's death, %q before", got, want)
	}
}

// TestAttachedChild is TestKillLeavesNothing's child: it attaches and
// waits to be killed.
func TestAttachedChild(t *testing.T) {
	env := os.Getenv(childEnv)
	if env == "" {
		t.Skip("run by TestKillLeavesNothing")
	}
	f := strings.Fields(env)
	path, usdt := f[0], f[2] == "true"
	pid, _ := strconv.Atoi(f[1])
	work, _ := function(t, path, "work")
	c := loadCounter(t, ebpf.Kprobe, UprobeAttachType(), 2, byCookie...)
	sites := []*probe.UserSite{
		{PID: pid, Path: path, Addr: work.Value, Size: work.Size},
		{PID: pid, Path: path, Addr: work.Value, Size: work.Size, Return: true},
	}
	if _, err := Uprobes(c.prog, sites, []uint64{0, 1}); err != nil {
		t.Fatal(err)
	}
	var sem uint64
	if usdt {
		cat, err := probe.Live(probe.Config{})
		if err != nil {
			t.Fatal(err)
		}
		ps, err := cat.Match(probe.Desc{Provider: "fixture" + f[1], Name: "tick"})
		if err != nil || len(ps) != 1 {
			t.Fatalf("Match(fixture%s:::tick) = %v, %v", f[1], ps, err)
		}
		site := ps[0].Detail.(*probe.USDTSite)
		sem = site.Points[0].Semaphore
		if _, err := USDT(c.prog, []*probe.USDTSite{site}, []uint64{1}); err != nil {
			t.Fatal(err)
		}
	}
	sys := loadCounter(t, ebpf.RawTracepoint, ebpf.AttachNone, 1, syscallsOf(os.Getpid(), 0, false)...)
	if _, err := Syscalls(sys.prog, false); err != nil {
		t.Fatal(err)
	}
	prof := loadCounter(t, ebpf.PerfEvent, ebpf.AttachNone, 1, asm.Mov.Imm(asm.R0, 0))
	if _, err := Profile(prof.prog, time.Second/997); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("ready %d %d %d %d\n", c.id(t), sys.id(t), prof.id(t), sem)
	time.Sleep(time.Minute)
}

// semaphore reads the 2-byte USDT semaphore at addr in process pid.
func semaphore(t *testing.T, pid int, addr uint64) uint16 {
	t.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b [2]byte
	if _, err := f.ReadAt(b[:], int64(addr)); err != nil {
		t.Fatal(err)
	}
	return binary.LittleEndian.Uint16(b[:])
}
