package main

import (
	"bytes"
	"debug/elf"
	"debug/gosym"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// init makes the test binary, run with KDTRACE_TEST_TOUCH set to a
// number of pages, the cpc test's workload (before TestMain runs).
func init() {
	if n := os.Getenv("KDTRACE_TEST_TOUCH"); n != "" {
		touchMain(n)
	}
}

// touchMain is the cpc test's workload: it maps n pages and touches
// each (touchPages), then exits.
func touchMain(n string) {
	pages, err := strconv.Atoi(n)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	size := pages * os.Getpagesize()
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// One fault a page: no huge page backs the mapping.
	if err := unix.Madvise(mem, unix.MADV_NOHUGEPAGE); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// The faults this thread takes while it touches them, as the
	// kernel counts them.
	runtime.LockOSThread()
	var before, after unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &before)
	touchPages(mem, os.Getpagesize())
	unix.Getrusage(unix.RUSAGE_THREAD, &after)
	fmt.Println(after.Minflt + after.Majflt - before.Minflt - before.Majflt)
	os.Exit(0)
}

// touchPages writes the first byte of each page of mem: a page fault
// each, in user mode, at an instruction of this function.
//
//go:noinline
func touchPages(mem []byte, pageSize int) {
	for i := 0; i < len(mem); i += pageSize {
		mem[i] = 1
	}
}

// funcRange returns the addresses of function fn in this test binary,
// and false if the binary is position-independent: a process that runs
// it has it elsewhere.
func funcRange(t *testing.T, fn any) (lo, hi uint64, ok bool) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC {
		return 0, 0, false
	}
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		t.Fatalf("%s has no .gopclntab or .text", exe)
	}
	data, err := pcln.Data()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		t.Fatal(err)
	}
	sf := tab.LookupFunc(name)
	if sf == nil {
		t.Fatalf("%s is not in %s's function table", name, exe)
	}
	return sf.Entry, sf.End, true
}

// TestCPCPageFaults counts the page faults of a workload, a child of
// this process that touches pages it maps, through cpc's page_faults
// events each firing at every fault: in user mode at the function that
// touches the pages (arg1, the user pc), as many as the kernel counts
// the thread took there (getrusage) and as it touched; in user mode
// and kernel mode, as many together as in all; and none in user mode
// with a kernel pc (arg0).
func TestCPCPageFaults(t *testing.T) {
	needTracing(t)
	const pages = 1000
	lo, hi, ok := funcRange(t, touchPages)
	if !ok {
		t.Skip("the test binary is position-independent: its child has touchPages elsewhere")
	}
	// The workload is the only child of this process while it runs.
	prog := fmt.Sprintf(`BEGIN { printf("go\n"); }
cpc:::page_faults-all-1 /ppid == $pid/ { @all = count(); }
cpc:::page-faults-user-1 /ppid == $pid/ { @user = count(); }
cpc:::page_faults-kernel-1 /ppid == $pid/ { @kernel = count(); }
cpc:::page-faults-user-1 /ppid == $pid && arg1 >= %#x && arg1 < %#x/ { @touch = count(); }
cpc:::page-faults-user-1 /ppid == $pid && arg0 != 0/ { @kpc = count(); }
END {
	printa("all %%@d\n", @all); printa("user %%@d\n", @user); printa("kernel %%@d\n", @kernel);
	printa("touch %%@d\n", @touch); printa("kpc %%@d\n", @kpc);
}`, lo, hi)
	var said []byte
	out, errs, st := runActive(t, []string{"-q", "-n", prog}, func() {
		defer syscall.Kill(os.Getpid(), syscall.SIGINT)
		exe, err := os.Executable()
		if err != nil {
			t.Error(err)
			return
		}
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), "KDTRACE_TEST_TOUCH="+strconv.Itoa(pages), "GODEBUG=asyncpreemptoff=1")
		if said, err = cmd.Output(); err != nil {
			t.Errorf("the workload: %v", err)
		}
	})
	if st != 0 {
		t.Fatalf("status %d: %s%s", st, out, errs)
	}
	faults, err := strconv.ParseInt(strings.TrimSpace(string(said)), 10, 64)
	if err != nil {
		t.Fatalf("the workload said %q: %v", said, err)
	}
	count := func(name string) int64 { return labeled(out, name) }
	all, user, kernel, touched, kpc := count("all"), count("user"), count("kernel"), count("touch"), count("kpc")
	t.Logf("getrusage: %d faults in touchPages; cpc: %d in touchPages, %d in all modes, %d user, %d kernel, %d user with a kernel pc", faults, touched, all, user, kernel, kpc)
	// The kernel's count is the thread's: it may hold a few faults
	// outside touchPages (the runtime's signal stack, when the thread
	// is preempted under load), which cpc sees at their own pcs.
	if touched != pages || faults < pages {
		t.Errorf("cpc counts %d faults in touchPages; the kernel counts %d in the thread; it touched %d pages", touched, faults, pages)
	}
	if user+kernel != all || kpc != 0 {
		t.Errorf("cpc counts %d faults in all modes, %d in user and %d in kernel mode, %d in user mode at a kernel pc\n%s%s", all, user, kernel, kpc, out, errs)
	}
}

// TestCPCClock fires cpc's cpu_clock probes in a workload, a shell that
// counts in a loop: in each mode, the probe fires in the workload, and
// arg0 and arg1 are the kernel's and the user's pc: in user mode arg0
// is 0, in kernel mode arg1.
func TestCPCClock(t *testing.T) {
	needTracing(t)
	const prog = `BEGIN { printf("go\n"); }
cpc:::cpu_clock-all-100000 /ppid == $pid/ { @all = count(); }
cpc:::cpu_clock-user-100000 /ppid == $pid/ { @user = count(); }
cpc:::cpu_clock-user-100000 /ppid == $pid && (arg0 != 0 || arg1 == 0)/ { @ubad = count(); }
cpc:::cpu_clock-kernel-100000 /arg1 != 0 || arg0 == 0/ { @kbad = count(); }
END { printa("all %@d\n", @all); printa("user %@d\n", @user); printa("ubad %@d\n", @ubad); printa("kbad %@d\n", @kbad); }`
	out, errs, st := runActive(t, []string{"-q", "-n", prog}, func() {
		defer syscall.Kill(os.Getpid(), syscall.SIGINT)
		sh := exec.Command("/bin/sh", "-c", `i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done`)
		if out, err := sh.CombinedOutput(); err != nil {
			t.Errorf("the workload: %v: %s", err, out)
		}
	})
	if st != 0 {
		t.Fatalf("status %d: %s%s", st, out, errs)
	}
	count := func(name string) int64 { return labeled(out, name) }
	all, user, ubad, kbad := count("all"), count("user"), count("ubad"), count("kbad")
	t.Logf("cpu_clock every 100 µs in the workload: %d in all modes, %d in user mode", all, user)
	if all == 0 || user == 0 || ubad != 0 || kbad != 0 {
		t.Errorf("cpu_clock fired %d times in all modes, %d in user mode; %d times in user mode and %d in kernel mode with the other mode's pc\n%s%s",
			all, user, ubad, kbad, out, errs)
	}
}

// TestCPCList checks that cpc lists the software events, which every
// kernel counts, and a hardware event if and only if the kernel lists a
// CPU performance monitoring unit; and that a probe of an event the
// machine cannot count is refused, and leaves nothing loaded.
func TestCPCList(t *testing.T) {
	needTracing(t)
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-lP", "cpc"}, &stdout, &stderr); st != 0 {
		t.Fatalf("-lP cpc: exit %d: %s", st, stderr.String())
	}
	listed := stdout.String()
	for _, name := range []string{"perf_count_sw_cpu_clock-all-1000000000", "perf_count_sw_task_clock-all-1000000000", "perf_count_sw_page_faults-all-1000000000"} {
		if !strings.Contains(listed, " "+name+"\n") {
			t.Errorf("-lP cpc does not list %s:\n%s", name, listed)
		}
	}
	_, err := os.Stat("/sys/bus/event_source/devices/cpu")
	pmu := err == nil
	if got := strings.Contains(listed, " perf_count_hw_cpu_cycles-all-1000000000\n"); got != pmu {
		t.Errorf("-lP cpc lists cycles: %v; the kernel lists a CPU PMU: %v\n%s", got, pmu, listed)
	}
	if pmu {
		return
	}
	before := loadedPrograms(t)
	stdout.Reset()
	stderr.Reset()
	st := run([]string{"kdtrace", "-n", "cpc:::cycles-all-100000 { @ = count(); }"}, &stdout, &stderr)
	want := "kdtrace: could not enable tracing: cpc:::cycles-all-100000: this machine cannot count the event (perf_event_open: no such file or directory): it has no hardware performance counters (no /sys/bus/event_source/devices/cpu)\n"
	if st == 0 || stderr.String() != want {
		t.Errorf("cpc:::cycles-all-100000 on a machine without a CPU PMU: exit %d, stderr %q; want %q", st, stderr.String(), want)
	}
	checkReleased(t, before)
}
