package attach

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

// syscallsOf keys the counts of a raw sys_enter or sys_exit program by
// 0 for this process's calls of nr (whose number is the tracepoint's
// second argument at sys_enter), skipping all others; at sys_exit,
// where the second argument is the return value, by 0 for every call of
// this process.
func syscallsOf(pid int, nr int, enter bool) []asm.Instruction {
	insns := []asm.Instruction{
		asm.FnGetCurrentPidTgid.Call(),
		asm.RSh.Imm(asm.R0, 32),
		asm.JNE.Imm(asm.R0, int32(pid), "exit"),
	}
	if enter {
		insns = append(insns,
			asm.LoadMem(asm.R2, asm.R6, 8, asm.DWord),
			asm.JNE.Imm(asm.R2, int32(nr), "exit"))
	}
	return append(insns, asm.Mov.Imm(asm.R0, 0))
}

func TestSyscalls(t *testing.T) {
	needBPF(t)
	nr, ok := SyscallNumber("getppid")
	if !ok || nr != unix.SYS_GETPPID {
		t.Fatalf("SyscallNumber(getppid) = %d, %v; want %d", nr, ok, unix.SYS_GETPPID)
	}
	const calls = 1000
	for _, ret := range []bool{false, true} {
		c := loadCounter(t, ebpf.RawTracepoint, ebpf.AttachNone, 1, syscallsOf(unix.Getpid(), nr, !ret)...)
		a, err := Syscalls(c.prog, ret)
		if err != nil {
			t.Fatal(err)
		}
		for range calls {
			unix.Getppid()
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		got := c.read(t)[0]
		if got < calls {
			t.Errorf("Syscalls(ret=%v) saw %d calls, want at least %d", ret, got, calls)
		}
		if !ret && got > calls+10 {
			t.Errorf("Syscalls(ret=false) saw %d getppid calls, made %d", got, calls)
		}
		for range calls {
			unix.Getppid()
		}
		if after := c.read(t)[0]; after != got {
			t.Errorf("Syscalls(ret=%v) counted %d calls after Close", ret, after-got)
		}
		if n := linksOf(t, c.id(t)); n != 0 {
			t.Errorf("%d links hold the program after Close", n)
		}
		if a, err := RawTracepoint(c.prog, "no_such_tracepoint"); err == nil {
			a.Close()
			t.Error("RawTracepoint(no_such_tracepoint) attached")
		}
	}
}

func TestTracepoint(t *testing.T) {
	needBPF(t)
	needTracefs(t)
	c := loadCounter(t, ebpf.TracePoint, ebpf.AttachNone, 1, syscallsOf(unix.Getpid(), 0, false)...)
	a, err := Tracepoint(c.prog, "syscalls", "sys_enter_getppid")
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		unix.Getppid()
	}
	a.Close()
	if got := c.read(t)[0]; got < 100 {
		t.Errorf("Tracepoint saw %d getppid calls, want at least 100", got)
	}
	if _, err := Tracepoint(c.prog, "syscalls", "sys_enter_nosuchcall"); err == nil {
		t.Error("Tracepoint(syscalls:sys_enter_nosuchcall) attached")
	}
}

func TestProfile(t *testing.T) {
	needBPF(t)
	c := loadCounter(t, ebpf.PerfEvent, ebpf.AttachNone, 1, asm.Mov.Imm(asm.R0, 0))
	perf := perfEvents(t)
	a, err := Profile(c.prog, time.Second/997)
	if err != nil {
		t.Fatal(err)
	}
	cpus, _ := onlineCPUs()
	if n := perfEvents(t) - perf; n != len(cpus) {
		t.Errorf("%d perf events for %d CPUs", n, len(cpus))
	}
	if n := linksOf(t, c.id(t)); n != len(cpus) {
		t.Errorf("%d links for %d CPUs", n, len(cpus))
	}
	burn(300 * time.Millisecond)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got := c.read(t)[0]
	t.Logf("%d samples in 300 ms of one busy thread at 997 Hz", got)
	if got == 0 {
		t.Error("no samples")
	}
	if n := perfEvents(t); n != perf {
		t.Errorf("%d perf events open after Close, %d before", n, perf)
	}
	if n := linksOf(t, c.id(t)); n != 0 {
		t.Errorf("%d links hold the program after Close", n)
	}
	if _, err := Profile(c.prog, 0); err == nil {
		t.Error("Profile with interval 0 attached")
	}
}

// burn keeps a thread busy for d.
func burn(d time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	x := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := range 10000 {
			x += i
		}
	}
	_ = x
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		ok   bool
	}{
		{"0", []int{0}, true},
		{"0-3", []int{0, 1, 2, 3}, true},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}, true},
		{"", nil, false},
		{"3-1", nil, false},
		{"a", nil, false},
	}
	for _, tt := range tests {
		got, err := parseCPUList(tt.in)
		if (err == nil) != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
