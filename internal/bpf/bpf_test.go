//go:build linux

package bpf_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// testRunOnCPU is BPF_F_TEST_RUN_ON_CPU: the run happens on RunOptions.CPU,
// so the per-CPU state is read from a known CPU.
const testRunOnCPU = 1

// needBPF skips the test unless this process may load BPF programs and
// test-run raw tracepoint programs.
func needBPF(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root: loading BPF programs needs CAP_BPF and CAP_PERFMON")
	}
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Skipf("BPF unavailable: %v", err)
	}
}

func newLayout(t testing.TB, cfg *bpf.Config) *bpf.Layout {
	t.Helper()
	l, err := bpf.NewLayout(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// newRuntime lays out objs under cfg and makes a runtime for them; the
// caller closes it.
func newRuntime(t testing.TB, cfg *bpf.Config, objs []*dif.Object) (*bpf.Layout, *bpf.Runtime) {
	t.Helper()
	l := newLayout(t, cfg)
	for _, o := range objs {
		if err := l.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := bpf.NewRuntime(l)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.AggsMade(); err != nil {
		rt.Close()
		t.Fatal(err)
	}
	return l, rt
}

// compileD parses, checks and generates src as kdtrace does.
func compileD(t testing.TB, src string) *dof.Program {
	t.Helper()
	p, err := dtracetest.Compile("t.d", []byte(src), nil)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return p
}

// result is what one DIFO gave: its value (for a string, the string it
// points to) or the fault that stopped it.
type result struct {
	Void  bool // an expression statement's: its value is not recorded
	Value uint64
	Str   string // a string's, or the bytes of another by-reference type
	IsStr bool
	Fault uint64
	PC    uint64
	Addr  uint64
}

func (r result) String() string {
	switch {
	case r.Fault != 0:
		return fmt.Sprintf("fault %d at %d (addr %#x)", r.Fault, r.PC, r.Addr)
	case r.IsStr:
		return fmt.Sprintf("%q", r.Str)
	case r.Void:
		return "void"
	}
	return fmt.Sprintf("%#x", r.Value)
}

// onVM runs the DIFOs in order on one machine, as one firing, and
// stops at the first fault.
func onVM(t *testing.T, objs []*dif.Object, ctx *vm.Context, cfg *vm.Config) []result {
	t.Helper()
	m := vm.New(cfg)
	m.BeginFiring()
	var out []result
	for _, o := range objs {
		v, err := m.Run(o, ctx)
		var f *vm.Fault
		switch {
		case errors.As(err, &f):
			return append(out, result{Fault: uint64(f.Code), PC: uint64(f.PC), Addr: f.Addr})
		case err != nil:
			t.Fatalf("vm: %v", err)
		case void(o):
			out = append(out, result{Void: true})
		case o.Ret.ByRef() && v == 0:
			// NULL, as strstr() and strtok() return: no bytes.
			out = append(out, result{})
		case o.Ret.Kind == dif.TypeString:
			s, err := m.ReadString(v)
			if err != nil {
				t.Fatalf("vm: %v", err)
			}
			out = append(out, result{Str: s, IsStr: true})
		case o.Ret.ByRef():
			b, err := m.ReadMemory(v, int(o.Ret.Size))
			if err != nil {
				t.Fatalf("vm: %v", err)
			}
			out = append(out, result{Str: string(b), IsStr: true})
		default:
			out = append(out, result{Value: v})
		}
	}
	return out
}

// void reports whether o is an expression statement's, as `x = 1;`,
// whose value dtrace does not record: for a by-reference variable's
// assignment it is an address, which differs between the VM and the
// kernel.
func void(o *dif.Object) bool { return o.Ret.Size == 0 && !o.Ret.ByRef() }

// inKernel translates the DIFOs, loads each as a raw tracepoint program
// and test-runs them in order on CPU 0 and one thread, as one firing of
// a probe with the given arguments. The caller runs on CPU 0 (onCPU0)
// if the programs depend on the current task.
func inKernel(t *testing.T, objs []*dif.Object, args []uint64) []result {
	t.Helper()
	l, rt := newRuntime(t, nil, objs)
	defer rt.Close()
	var progs []*ebpf.Program
	defer func() {
		for _, p := range progs {
			p.Close()
		}
	}()
	for i, o := range objs {
		insns, err := bpf.Translate(o, l)
		if err != nil {
			t.Fatal(err)
		}
		p, err := rt.Load(fmt.Sprintf("difo%d", i), insns)
		if err != nil {
			var ve *ebpf.VerifierError
			if errors.As(err, &ve) {
				t.Fatalf("%v\n%+v\n%v", err, ve, insns)
			}
			t.Fatal(err)
		}
		progs = append(progs, p)
	}
	if err := rt.BeginFiring(); err != nil {
		t.Fatal(err)
	}
	setArgs(t, rt, args)
	if err := rt.SetProbeNames(firingID, firingProv, firingMod, firingFunc, firingName); err != nil {
		t.Fatal(err)
	}
	var out []result
	for i, p := range progs {
		if _, err := p.Run(&ebpf.RunOptions{Context: make([]byte, 8), Flags: testRunOnCPU, CPU: 0}); err != nil {
			t.Fatalf("test run: %v", err)
		}
		st, err := rt.ReadState(0)
		if err != nil {
			t.Fatal(err)
		}
		if st.Fault != 0 {
			return append(out, result{Fault: st.Fault, PC: st.FaultPC, Addr: st.FaultAddr})
		}
		if void(objs[i]) {
			out = append(out, result{Void: true})
			continue
		}
		if !objs[i].Ret.ByRef() || st.Ret == 0 {
			out = append(out, result{Value: st.Ret})
			continue
		}
		s, err := readMemory(rt, 0, objs[i].Ret)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, result{Str: s, IsStr: true})
	}
	return out
}

// readMemory returns what a DIFO of by-reference type typ returned on
// cpu (StateRet), wherever it is (the string map, scratch, a variable's
// storage), as a program reads it into MapStrBuf: a string by
// bpf_probe_read_kernel_str, up to its NUL, other types whole.
func readMemory(rt *bpf.Runtime, cpu int, typ dif.Type) (string, error) {
	const strsize = 256 // the default Config's
	size, read := int32(strsize+1), asm.FnProbeReadKernelStr
	if typ.Kind != dif.TypeString {
		size, read = int32(typ.Size), asm.FnProbeReadKernel
	}
	if size > int32(rt.StrBuf.ValueSize()) {
		return "", fmt.Errorf("a %d-byte value does not fit the string buffer", size)
	}
	lookup := func(name string) asm.Instructions {
		return asm.Instructions{
			asm.LoadMapPtr(asm.R1, 0).WithReference(name),
			asm.Mov.Reg(asm.R2, asm.R10),
			asm.Add.Imm(asm.R2, -8),
			asm.FnMapLookupElem.Call(),
			asm.JEq.Imm(asm.R0, 0, "out"),
		}
	}
	insns := asm.Instructions{asm.StoreImm(asm.R10, -8, 0, asm.Word)}
	insns = append(insns, lookup(bpf.MapStrBuf)...)
	insns = append(insns, asm.Mov.Reg(asm.R6, asm.R0))
	insns = append(insns, lookup(bpf.MapState)...)
	insns = append(insns,
		asm.LoadMem(asm.R3, asm.R0, bpf.StateRet, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R6),
		asm.Mov.Imm(asm.R2, size),
		read.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
	p, err := rt.Load("readmem", insns)
	if err != nil {
		return "", err
	}
	defer p.Close()
	if _, err := p.Run(&ebpf.RunOptions{Context: make([]byte, 8), Flags: testRunOnCPU, CPU: uint32(cpu)}); err != nil {
		return "", err
	}
	var bufs [][]byte
	if err := rt.StrBuf.Lookup(uint32(0), &bufs); err != nil {
		return "", err
	}
	b := bufs[cpu][:size]
	if i := bytes.IndexByte(b, 0); i >= 0 && typ.Kind == dif.TypeString {
		b = b[:i]
	}
	return string(b), nil
}

// The probe and ECB of a firing, as the DIFOs run by inKernel and
// onVM see them.
const (
	firingID   = 42
	firingEPID = 7
	firingProv = "prov"
	firingMod  = "a.module"
	firingFunc = "some_function"
	firingName = "entry"
)

// setArgs writes a firing's arguments, its probe's ID and its EPID into
// CPU 0's state, as the prologue of a probe's program does.
func setArgs(t *testing.T, rt *bpf.Runtime, args []uint64) {
	t.Helper()
	var vals [][]byte
	if err := rt.State.Lookup(uint32(0), &vals); err != nil {
		t.Fatal(err)
	}
	for i, a := range args[:min(len(args), bpf.NArgs)] {
		binary.NativeEndian.PutUint64(vals[0][bpf.StateArgs+8*i:], a)
	}
	binary.NativeEndian.PutUint64(vals[0][bpf.StateProbeID:], firingID)
	binary.NativeEndian.PutUint64(vals[0][bpf.StateEPID:], firingEPID)
	if err := rt.State.Put(uint32(0), vals); err != nil {
		t.Fatal(err)
	}
}

// thisThread is the context of a firing on CPU 0 in this thread, which
// must be locked to its OS thread.
func thisThread(args ...uint64) *vm.Context {
	comm, _ := os.ReadFile("/proc/thread-self/comm")
	return &vm.Context{PID: uint64(os.Getpid()), PPID: uint64(os.Getppid()), TID: uint64(unix.Gettid()), UID: uint64(os.Getuid()),
		GID: uint64(os.Getgid()), CPU: 0, Args: args, Execname: strings.TrimSuffix(string(comm), "\n"),
		ID: firingID, EPID: firingEPID, ProbeProv: firingProv, ProbeMod: firingMod, ProbeFunc: firingFunc, ProbeName: firingName}
}

// onCPU0 locks the goroutine to its thread and the thread to CPU 0, and
// returns what undoes it. BPF_F_TEST_RUN_ON_CPU runs the program in an
// interrupt on CPU 0 when called from another CPU, where the current
// task is any task; on CPU 0 the task is this thread, whose pid, tid and
// thread-locals the programs see.
func onCPU0(t *testing.T) func() {
	t.Helper()
	runtime.LockOSThread()
	var old, cpu0 unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		t.Fatal(err)
	}
	cpu0.Set(0)
	if err := unix.SchedSetaffinity(0, &cpu0); err != nil {
		t.Fatal(err)
	}
	return func() {
		unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}
}

// differ runs objs on dif/vm and in the kernel, and reports where
// they differ.
func differ(t *testing.T, name string, objs []*dif.Object, args ...uint64) {
	t.Helper()
	differCtx(t, name, objs, nil, args...)
}

// differCfg is differ with a configured VM.
func differCfg(t *testing.T, name string, objs []*dif.Object, cfg *vm.Config) {
	t.Helper()
	differCtx(t, name, objs, cfg)
}

// differAddr is differCfg comparing the addresses of faults or not.
func differAddr(t *testing.T, name string, objs []*dif.Object, cfg *vm.Config, addrs bool) {
	t.Helper()
	defer onCPU0(t)()
	want := onVM(t, objs, thisThread(), cfg)
	got := inKernel(t, objs, nil)
	if !addrs {
		for _, r := range [][]result{want, got} {
			for i := range r {
				r[i].Addr = 0
			}
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: kernel %v, vm %v", name, got, want)
	}
}

func differCtx(t *testing.T, name string, objs []*dif.Object, cfg *vm.Config, args ...uint64) {
	t.Helper()
	defer onCPU0(t)()
	want := onVM(t, objs, thisThread(args...), cfg)
	got := inKernel(t, objs, args)
	if !slices.Equal(got, want) {
		t.Errorf("%s: kernel %v, vm %v", name, got, want)
	}
}

// difos returns the DIFOs of p's clauses in the order a firing runs
// them: each ECB's predicate, then its actions.
func difos(p *dof.Program) []*dif.Object {
	var objs []*dif.Object
	for _, ecb := range p.ECBs {
		if ecb.Pred != nil {
			objs = append(objs, emit.Object(ecb.Pred))
		}
		for _, a := range ecb.Actions {
			if a.DIFO != nil {
				objs = append(objs, emit.Object(a.DIFO))
			}
		}
	}
	return objs
}

// TestD runs D compiled through the pipeline both on dif/vm and,
// translated, in the kernel, and compares every DIFO's value.
func TestD(t *testing.T) {
	needBPF(t)
	tests := []string{
		`BEGIN { trace(1 + 2); }`,
		`BEGIN { x = 3; y = x * 7 + 1; trace(y); }`,
		`BEGIN { x = -7; trace(x / 2); trace(x % 3); trace(x >> 1); }`,
		`BEGIN { x = -7LL; trace(x / 2); trace(x >> 60); trace((uint64_t)x >> 60); }`,
		`BEGIN { x = (unsigned)-7; trace(x / 2); trace(x % 5); }`,
		`BEGIN { x = 1; trace(x << 31); trace(1LL << 40); trace(~x); trace(-x); trace(!x); }`,
		`BEGIN { x = 0x0f; trace(x & 6); trace(x | 0x30); trace(x ^ 0xff); }`,
		`BEGIN { x = -1; trace(x < 0); trace(x > 0); trace((unsigned)x > 0); trace(x <= -1); trace(x >= 0); trace(x == -1); trace(x != -1); }`,
		`BEGIN { x = 3; trace(x > 2 ? 10 : 20); trace(x > 5 ? 10 : 20); }`,
		`BEGIN { x = 0; y = 2; trace(x && y); trace(x || y); trace(y && y); trace(x || x); trace(x ^^ y); trace(y ^^ y); }`,
		`BEGIN { x = 0x7fffffffffffffffLL; y = -1LL; trace(x > y); trace(x < y); trace((uint64_t)x < (uint64_t)y); }`,
		// The sign of the difference decides: INT64_MIN > 1 because
		// INT64_MIN - 1 overflows to a positive number.
		`BEGIN { x = 0x8000000000000000LL; trace(x > 1); trace(x < 1); trace(x >= 1); trace(x <= 1); }`,
		`BEGIN { x = 0x8000000000000000LL; y = -1LL; trace(x / y); trace(x % y); }`,
		`BEGIN { x = 1LL; n = 64; trace(x << n); n = 65; trace(x << n); trace(-8LL >> n); trace(0xf0LL >> 68); }`,
		`BEGIN { x = 10; y = 0; trace(x / y); }`,
		`BEGIN { x = 10; y = 0; trace(x % y); }`,
		`BEGIN { x = 10U; y = 0U; trace(x / y); }`,
		`BEGIN { trace(*(int *)0); }`,
		`BEGIN { trace(*(char *)8); }`,
		`BEGIN { trace("hello"); }`,
		`BEGIN { x = 4; trace(x > 2 ? "big" : "small"); }`,
		`BEGIN { self->x = 5; trace(self->x * 2); self->x = 0; trace(self->x); }`,
		`BEGIN { self->n = 1; self->n += 41; trace(self->n); }`,
		`BEGIN { this->a = 7; this->b = this->a * 6; trace(this->b); }`,
		`BEGIN { x = 1; } BEGIN { x += 10; trace(x); } BEGIN /x > 5/ { trace(x * 3); } BEGIN /x > 100/ { trace(x); }`,
		`BEGIN { x = 5; y = 0; trace(x); trace(x / y); trace(x); }`,
		`BEGIN { a = 0xdeadbeefcafeLL; b = 123456789; trace(a * b); trace(a - b); trace(b - a); trace(a / b); trace(a % b); }`,
		`BEGIN { c = (char)0x80; trace(c < 0); u = (unsigned char)0x80; trace(u < 0); }`,
		`BEGIN { trace("abc" == "abd"); trace("abc" < "abd"); trace("b" > "abc"); trace("" == ""); trace("abc" != "abc"); trace("ab" >= "abc"); }`,
		`BEGIN { x = 2; trace((x > 1 ? "yes" : "no") == "yes"); }`,
		`BEGIN { trace(execname); trace(execname == "bpf.test"); trace(execname != "sshd"); }`,
		`BEGIN { trace(arg0); trace(arg1 + 1); trace(arg4 >> 1); trace(arg9); }`,
		`BEGIN { trace(pid); trace(tid); trace(cpu); trace(ppid); }`,
		`BEGIN { trace(id); trace(epid); trace(errno); }`,
		`BEGIN { trace(probeprov); trace(probemod); trace(probefunc); trace(probename); trace(probename == "entry"); }`,
		`BEGIN { self->f = probefunc; trace(self->f); this->p = probeprov; trace(this->p); }`,
		`BEGIN /arg0 == 7/ { self->a = arg2; } BEGIN /self->a/ { trace(self->a + tid); }`,
		// By-reference variables hold their bytes.
		`BEGIN { s = "hello"; trace(s); s = "hi"; trace(s); trace(s == "hi"); trace(s != "hello"); }`,
		`string s; BEGIN { trace(s); trace(s == ""); }`,
		`BEGIN { s = "first"; t = s; s = "second"; trace(t); trace(s); } BEGIN { trace(s < t); }`,
		`BEGIN { s = execname; trace(s); trace(s == execname); }`,
		`BEGIN { this->s = "local"; trace(this->s); this->t = this->s; this->s = "x"; trace(this->t); trace(this->s); }`,
		`BEGIN { self->s = "thread"; trace(self->s); self->s = "t"; trace(self->s); trace(self->s == "t"); }`,
		`self string none; BEGIN { trace(self->none == NULL); self->s = execname; trace(self->s); trace(self->s != NULL); }`,
		`BEGIN { a = "x"; b = "y"; c = a; a = b; b = c; trace(a); trace(b); trace(c); }`,
		// The tuple stack and subroutines.
		`BEGIN { trace(strlen("hello")); trace(strlen("")); trace(strlen(execname)); s = "abc"; trace(strlen(s)); }`,
		`BEGIN { trace(strjoin("ab", "cd")); trace(strjoin("", "x")); trace(strjoin(execname, "!")); trace(strlen(strjoin("abc", "defg"))); }`,
		`BEGIN { s = strjoin("a", "b"); s = strjoin(s, s); s = strjoin(s, s); trace(s); self->t = strjoin(s, "."); trace(self->t); }`,
		`BEGIN { x = (char *)alloca(8); trace(x != NULL); }`,
		`BEGIN { trace(strlen((char *)0)); }`,
		`BEGIN { trace(strjoin("a", (char *)8)); }`,
		`BEGIN { trace(htons(0x1234)); trace(ntohs(0xabcdef)); trace(htonl(0x12345678)); trace(ntohl(-1)); trace(htonll(0x0102030405060708)); trace(ntohll(0x1122)); }`,
		`BEGIN { s = "hello"; trace(strchr(s, 'l')); trace(strrchr(s, 'l')); trace(strchr(s, 'z') == NULL); trace(strchr(s, 0)); trace(strrchr("", 'a') == NULL); }`,
		`BEGIN { trace(strchr((char *)0, 'a')); }`,
		`BEGIN { trace(lltostr(0)); trace(lltostr(1)); trace(lltostr(-1)); trace(lltostr(123456789)); trace(lltostr(-123456789)); trace(lltostr(1LL << 62)); trace(lltostr(-(1LL << 62))); trace(lltostr(0x8000000000000000LL)); }`,
		`BEGIN { trace(lltostr(0, 16)); trace(lltostr(255, 16)); trace(lltostr(-1, 16)); trace(lltostr(8, 8)); trace(lltostr(0, 8)); trace(lltostr(-1, 2)); trace(lltostr(35, 36)); trace(lltostr(-5, 3)); }`,
		`BEGIN { b = 1; trace(lltostr(5, b)); }`,
		`BEGIN { b = 37; trace(lltostr(5, b)); }`,
		`BEGIN { s = "foobarbarbazbarbop"; trace(strstr(s, "bar")); trace(strstr(s, "barba") == NULL); trace(strstr(s, "zba")); trace(strstr(s, "") == s); trace(strstr("", "")); trace(strstr(s, "bopp") == NULL); trace(strstr("f", "f")); }`,
		`BEGIN { trace(index("foofoofoo", "foo")); trace(rindex("foofoofoo", "foo")); trace(index("foobar", "")); trace(rindex("foobar", "")); trace(index("", "")); trace(index("", "x")); trace(rindex("foobar", "barbaz")); }`,
		`BEGIN { s = "foofoofoo"; trace(index(s, "foo", -400)); trace(index(s, "foo", 1)); trace(index(s, "foo", 7)); trace(index(s, "", 9)); trace(index(s, "", 400)); trace(rindex(s, "foo", -1)); trace(rindex(s, "", -1)); trace(rindex(s, "foo", 5)); trace(rindex(s, "foo", 400)); }`,
		`BEGIN { trace(strstr((char *)8, "a")); }`,
		`BEGIN { trace(strtoll("0", 2)); trace(strtoll("0x20", 16)); trace(strtoll(" \t-32", 10)); trace(strtoll("010", 8)); trace(strtoll("9223372036854775807")); trace(strtoll("-9223372036854775808")); trace(strtoll("-1000000000000000000001", 8)); trace(strtoll("baddcafe", 16)); trace(strtoll("12j")); trace(strtoll("-0DTrace4EverZ", 36)); trace(strtoll("")); trace(strtoll("0xg", 16)); trace(strtoll("+0X1f", 16)); }`,
		`BEGIN { b = 37; trace(strtoll("5", b)); }`,
		`BEGIN { trace(toupper("abcXyz1-@[` + "`" + `{")); trace(tolower("ABCxYZ1-@[` + "`" + `{")); trace(toupper("")); x = "MiXeD"; trace(tolower(x)); trace(toupper(x)); }`,
		`BEGIN { trace(toupper((char *)8)); }`,
		`BEGIN { x = "hello"; p = alloca(8); bcopy(x, p, 6); trace(stringof(p)); }`,
		`BEGIN { x = "hello"; bcopy(x, (void *)8, 4); }`,
		`BEGIN { p = alloca(8); bcopy((void *)8, p, 4); }`,
		`BEGIN { trace(strtoll((char *)8)); }`,
		`BEGIN { trace(cleanpath("/foo/bar/../../baz/.//")); trace(cleanpath("foo/bar/./././././baz/")); trace(cleanpath("/foo/bar/baz/../../../../../../")); trace(cleanpath("/./")); trace(cleanpath("/foo/bar/baz/../../bop/bang/../../bar/baz/")); trace(cleanpath("//")); trace(cleanpath("/.")); trace(cleanpath("")); trace(cleanpath("/a/..b/.c/..")); trace(cleanpath("a/..")); }`,
		`BEGIN { trace(strtok(",,,Carrots,,Barley,Oatmeal,,,Beans,", ",")); trace(strtok(NULL, ",")); trace(strtok(NULL, ",")); trace(strtok(NULL, ", ")); trace(strtok(NULL, ",") == NULL); trace(strtok(NULL, ",") == NULL); } BEGIN { trace(strtok(NULL, ",") == NULL); trace(strtok("", "") == NULL); trace(strtok("foo", "")); trace(strtok("foo", "o")); trace(strtok("abc", "xyz")); trace(strtok(NULL, "xyz") == NULL); }`,
		`BEGIN { trace(strtok((char *)8, ",")); }`,
		`typedef uint32_t in_addr_t; BEGIN { this->a = (in_addr_t *)alloca(4); *this->a = htonl(0xc0a80117); trace(inet_ntoa(this->a)); *this->a = 0; trace(inet_ntoa(this->a)); *this->a = -1; trace(inet_ntoa(this->a)); *this->a = htonl(0x7f000a01); trace(inet_ntoa(this->a)); }`,
		`typedef uint32_t in_addr_t; BEGIN { trace(inet_ntoa((in_addr_t *)8)); }`,
		`struct in6_addr { uint8_t b[16]; }; BEGIN { a = (struct in6_addr *)alloca(16); a->b[0] = 0xfe; a->b[1] = 0x80; a->b[8] = 2; a->b[9] = 0x14; a->b[10] = 0x4f; a->b[11] = 0xff; a->b[12] = 0xfe; a->b[13] = 0x0b; a->b[14] = 0x76; a->b[15] = 0xc8; trace(inet_ntop(10, a)); trace(inet_ntoa6(a)); trace(inet_ntop(28, a)); }`,
		`struct in6_addr { uint8_t b[16]; }; BEGIN { a = (struct in6_addr *)alloca(16); trace(inet_ntop(10, a)); a->b[15] = 1; trace(inet_ntop(10, a)); a->b[12] = 0x7f; trace(inet_ntop(10, a)); trace(inet_ntoa6(a)); a->b[10] = 0xff; a->b[11] = 0xff; trace(inet_ntop(10, a)); trace(inet_ntoa6(a)); a->b[0] = 0x20; a->b[1] = 1; trace(inet_ntop(10, a)); a->b[6] = 1; a->b[15] = 0; trace(inet_ntop(10, a)); }`,
		`struct in6_addr { uint8_t b[16]; }; BEGIN { a = (struct in6_addr *)alloca(16); a->b[1] = 1; a->b[3] = 2; a->b[9] = 3; a->b[14] = 0xab; a->b[15] = 0xcd; trace(inet_ntop(10, a)); a->b[5] = 7; trace(inet_ntop(10, a)); trace(inet_ntop(2, a)); }`,
		`struct in6_addr { uint8_t b[16]; }; BEGIN { trace(inet_ntop(3, (void *)alloca(16))); }`,
		`struct in6_addr { uint8_t b[16]; }; BEGIN { trace(inet_ntop(10, (void *)8)); }`,
		`BEGIN { j = "[1,5,{\"a\":[3,{\"b\":\"x\\\"y\"}]},true, null, -1.5e3]"; trace(json(j, "0")); trace(json(j, "2.a[1].b")); trace(json(j, "2")); trace(json(j, "3")); trace(json(j, "7") == NULL); trace(json(j, "[5]")); trace(json(j, "4")); trace(json(j, "2.c") == NULL); }`,
		`BEGIN { j = "{\"k\": {\"l\": [ \"u\\u00e9\", 0x1]}, \"m\":false}"; trace(json(j, "k.l[0]")); trace(json(j, "k.l[1]") == NULL); trace(json(j, "m")); trace(json(j, "k")); trace(json("[]", "0") == NULL); trace(json("nope", "0") == NULL); }`,
		`BEGIN { trace(json((char *)8, "a")); }`,
		`BEGIN { trace(basename("/foo/bar///baz/")); trace(dirname("/foo/bar///baz/")); trace(basename("/")); trace(dirname("//")); trace(basename("")); trace(dirname("")); trace(basename("f/")); trace(dirname("f/")); trace(dirname("/.")); trace(basename("foo/bar/baz/")); trace(dirname("foo/bar/baz/")); trace(dirname("/f")); }`,
		// Associative arrays.
		`BEGIN { a["x"] = 1; a["y"] = 2; trace(a["x"] + a["y"]); trace(a["z"]); a["x"] = 0; trace(a["x"]); a["y"] += 5; trace(a["y"]); }`,
		`BEGIN { b[1, 2] = 3; b[2, 1] = 4; trace(b[1, 2]); trace(b[2, 1]); trace(b[1, 1]); k = 2; trace(b[k - 1, k]); }`,
		`BEGIN { c[1] = "hello"; c[2] = execname; trace(c[1]); trace(c[2]); trace(c[3] == NULL); c[1] = "x"; trace(c[1]); }`,
		`BEGIN { d[execname, 7] = "e"; trace(d[execname, 7]); s = strjoin(execname, ""); trace(d[s, 7]); trace(d[s, 8] == NULL); }`,
		`BEGIN { self->t[1] = 5; self->t[2] = 6; trace(self->t[1] * self->t[2]); trace(self->t[3]); }`,
		`BEGIN { e["a"] = 1; } BEGIN { e["b"] = e["a"] + 1; } BEGIN { trace(e["b"]); }`,
		`BEGIN { f[(char *)0] = 1; }`,
		`int a[4]; BEGIN { a[1] = 5; a[3] = a[1] * 2; trace(a[0]); trace(a[1]); trace(a[3]); }`,
		`struct p { int x; char c; long y; }; struct p v; this struct p l; BEGIN { v.x = 3; v.y = -9; v.c = 'a'; this->l.y = v.x; trace(v.x + v.y); trace(v.c); trace(this->l.y); trace(this->l.x); }`,
		`BEGIN { s = "abc"; *(char *)(&s[0]) = 'x'; trace(s); }`,
	}
	for _, src := range tests {
		t.Run(src, func(t *testing.T) {
			differ(t, src, difos(compileD(t, src)), 7, ^uint64(2), 0x1234, 200, 1<<63)
		})
	}
}

// layOut compiles src, loads its DOF (cfg is enabling.Load's) and lays
// out its ECBs as the clauses of one program of context ctx on probe p,
// as internal/linux does: the layout, the program and the probe's entry.
func layOut(t *testing.T, src string, p record.Probe, ctx bpf.Context, cfg *enabling.Config) (*bpf.Layout, *bpf.ProbeProgram, bpf.ProbeEntry) {
	t.Helper()
	b, err := dof.Write(compileD(t, src), nil)
	if err != nil {
		t.Fatal(err)
	}
	k, err := enabling.Load(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rl := record.NewLayout(record.OptionsOf(k))
	pp := &bpf.ProbeProgram{Context: ctx}
	ent := bpf.ProbeEntry{ID: p.ID}
	for i := range k.ECBs {
		eps, err := rl.Add(&k.ECBs[i], []record.Probe{p})
		if err != nil {
			t.Fatal(err)
		}
		pp.Clauses = append(pp.Clauses, bpf.Clause{ECB: &k.ECBs[i], EP: eps[0]})
		ent.EPIDs = append(ent.EPIDs, eps[0].EPID)
	}
	l := newLayout(t, nil)
	if err := l.AddProbe(pp); err != nil {
		t.Fatal(err)
	}
	return l, pp, ent
}

// aggSums returns the entries of an aggregation map whose keys end in
// one 8-byte tuple member: that member to its first data word, summed
// over the CPUs.
func aggSums(t *testing.T, m *ebpf.Map) map[uint64]uint64 {
	t.Helper()
	got := map[uint64]uint64{}
	var (
		key  []byte
		vals [][]byte
	)
	it := m.Iterate()
	for it.Next(&key, &vals) {
		for _, v := range vals {
			got[binary.NativeEndian.Uint64(key[len(key)-8:])] += binary.NativeEndian.Uint64(v)
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}
