package dtrace_test

import (
	"debug/elf"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarftypes"
	"github.com/kdtrace/kdtrace/internal/guest"

	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dtrace"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
)

// localsKernel is a "kernel" for kinst's offline catalog: work's
// parameters and locals live in rbp's frame at clang -O0, which needs
// no call frame information, and its static local in .data.
const localsKernel = `struct req { int len; long id; };
__attribute__((noinline)) long work(struct req *r, int n)
{
	static long hits = 5;
	long sum = 0;
	__asm__ volatile(".globl mark\nmark:" : : "r"(r), "r"(n));
	hits++;
	for (int i = 0; i < n; i++)
		sum += r->len;
	return sum + r->id + hits;
}
int main(void) { struct req q = { 3, 7 }; return (int)work(&q, 4); }
`

// TestLocalsKinstOffline compiles locals-> at a kinst offset of an image
// given as the kernel, from its DWARF, and runs the code in the VM over
// registers and memory laid out as clang laid out work's frame.
func TestLocalsKinstOffline(t *testing.T) {
	bin, addr := buildMarked(t, "clang", "-O0", localsKernel)
	off := addr["mark"] - addr["work"]

	h, err := dtrace.Open(&dtrace.Config{BTF: "none", Kernel: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	probe := "kinst::work:" + strconv.FormatUint(off, 10)
	p, err := h.Compile(dtrace.Name, probe+" { trace(locals->n); trace(locals->r->id); trace(locals->sum); trace(locals->hits); }", 0)
	if err != nil {
		t.Fatal(err)
	}
	// Lay out work's frame where its DWARF says clang put each
	// variable (DW_OP_fbreg from rbp), its static where DW_OP_addr
	// says, and see each read.
	ty, err := dwarftypes.OpenFile(bin, "kernel")
	if err != nil {
		t.Fatal(err)
	}
	defer ty.Close()
	sc, err := ty.Scope(addr["mark"])
	if err != nil {
		t.Fatal(err)
	}
	if sc.FrameBase.String() != "DW_OP_reg6" {
		t.Fatalf("frame base %s, want rbp", sc.FrameBase)
	}
	const rbp, reqAt = 0x10000, 0x20000
	frame := make([]byte, 128)
	var kmem vm.Segments
	set := func(name string, v uint64, size int) {
		t.Helper()
		l, ok := sc.Lookup(name)
		if !ok || len(l.Loc) != 1 {
			t.Fatalf("%s at mark: %+v", name, l)
		}
		b := make([]byte, size)
		if size == 4 {
			binary.LittleEndian.PutUint32(b, uint32(v))
		} else {
			binary.LittleEndian.PutUint64(b, v)
		}
		switch op := l.Loc[0]; op.Code {
		case dwarfexpr.OpFbreg:
			copy(frame[64+op.Int:], b)
		case dwarfexpr.OpAddr:
			kmem = append(kmem, vm.Segment{Addr: op.Uint, Data: b})
		default:
			t.Fatalf("%s at %s", name, l.Loc)
		}
	}
	set("n", 4, 4)
	set("r", reqAt, 8)
	set("sum", 11, 8)
	set("hits", 6, 8)
	req := make([]byte, 16)
	binary.LittleEndian.PutUint32(req, 3)
	binary.LittleEndian.PutUint64(req[8:], 7)
	kmem = append(kmem, vm.Segment{Addr: rbp - 64, Data: frame}, vm.Segment{Addr: reqAt, Data: req})
	regs := make([]uint64, 41)
	regs[29] = rbp // R_RBP
	m := vm.New(&vm.Config{Kernel: kmem})
	m.BeginFiring()
	m.BeginClause()
	want := []uint64{4, 7, 11, 6}
	_, _, obj := dtrace.Parts(p)
	acts := obj.ECBs[0].Actions
	if len(acts) != len(want) {
		t.Fatalf("%d actions", len(acts))
	}
	for i, a := range acts {
		v, err := m.Run(emit.Object(a.DIFO), &vm.Context{Regs: regs})
		if err != nil || v != want[i] {
			t.Errorf("action %d = %d, %v; want %d", i+1, v, err, want[i])
		}
	}

	// -lv lists them, typed.
	var out strings.Builder
	lp, err := h.Compile(dtrace.Name, probe, dtrace.NoCode)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ListProbes(&out, true, lp); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"locals->r: struct req * (parameter)", "locals->n: int (parameter)", "locals->sum: long", "locals->hits: long"} {
		if !strings.Contains(out.String(), "\t\t"+l+"\n") {
			t.Errorf("-lv lacks %q:\n%s", l, out.String())
		}
	}

	// Every instruction of work: clang -O0 gives n a single location,
	// rbp-12, not a list, but it holds only past the prologue; in it,
	// n is in rsi at the first instruction and nowhere known after.
	if _, err := h.Compile(dtrace.Name, "kinst::work: { trace(locals->n); }", 0); err == nil ||
		!strings.Contains(err.Error(), "locals->n is not available at kinst::work:: at kinst:vmlinux:work:1: in the prologue (which ends at work+0x") {
		t.Errorf("kinst::work: error %v, want n unavailable in the prologue", err)
	}

	// A name that is not there, and a probe not in a function's frame.
	for _, tt := range []struct{ src, err string }{
		{probe + " { trace(locals->summ); }", "summ is not a variable or parameter of work at " + probe + " (did you mean sum?); in scope there: hits, r, n, sum"},
		{"kinst::main:0 { trace(locals->r); }", "r is not a variable or parameter of main at kinst::main:0; in scope there: q"},
		{"BEGIN { trace(locals->r); }", "locals->r is not available at :::BEGIN: dtrace:::BEGIN is no kinst probe nor pid probe in a function"},
	} {
		if _, err := h.Compile(dtrace.Name, tt.src, 0); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: error %v, want %q", tt.src, err, tt.err)
		}
	}
}

// TestLocalsVmlinux compiles locals->count at vfs_read's entry and in
// its middle against a vmlinux with DWARF (KDTRACE_VMLINUX), timing the
// first compile (the image's DWARF opened and indexed) and the next
// ones, and reads an inlined copy's parameter (fsnotify_access's file)
// where the copy is.
func TestLocalsVmlinux(t *testing.T) {
	path, ok := guest.CachedDebug()
	if !ok {
		t.Skip("no vmlinux with DWARF: set KDTRACE_VMLINUX, or run the guest test once")
	}
	if testing.Short() {
		t.Skip("short")
	}
	h, err := dtrace.Open(&dtrace.Config{BTF: "none", Kernel: path})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	compile := func(src string) time.Duration {
		t.Helper()
		start := time.Now()
		if _, err := h.Compile(dtrace.Name, src, 0); err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		return time.Since(start)
	}
	cold := compile(`kinst::vfs_read:0 { printf("%d\n", locals->count); }`)
	warm := compile(`kinst::vfs_read:0 { printf("%d\n", locals->count); }`)
	t.Logf("kinst::vfs_read:0 locals->count: cold %v, warm %v", cold, warm)

	// Where fsnotify_access's copy is, its file parameter.
	ty, err := dwarftypes.OpenFile(path, "kernel")
	if err != nil {
		t.Fatal(err)
	}
	defer ty.Close()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	syms, _ := f.Symbols()
	f.Close()
	var fn elf.Symbol
	for _, s := range syms {
		if s.Name == "vfs_read" && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			fn = s
		}
	}
	found := false
	for off := uint64(0); off < fn.Size && !found; off++ {
		sc, err := ty.Scope(fn.Value + off)
		if err != nil {
			continue
		}
		for _, l := range sc.Locals {
			if l.Inlined == "fsnotify_access" && l.Name == "file" && len(l.Loc) > 0 {
				found = true
				// An instruction boundary: kinst checks it.
				src := fmt.Sprintf("kinst::vfs_read:%d { print(locals->file); }", off)
				if _, err := h.Compile(dtrace.Name, src, 0); err != nil && !strings.Contains(err.Error(), "not an instruction") {
					t.Errorf("%s: %v", src, err)
				} else if err == nil {
					t.Logf("vfs_read+%d: fsnotify_access's file read, %s", off, l.Loc)
				} else {
					found = false
				}
				break
			}
		}
	}
	if !found {
		t.Errorf("no instruction of vfs_read where fsnotify_access's file is available")
	}

	// At +241 count is min(its value on entry, MAX_RW_COUNT), the entry
	// value from vfs_read's callers in its unit (ksys_read's among them),
	// which compute it from r12 or r13, saved where the debug image's
	// .debug_frame says. The value is available; the min, computed with
	// DW_OP_bra, is what the code generator does not read.
	src := `kinst::vfs_read:241 { trace(locals->count); }`
	if _, err := h.Compile(dtrace.Name, src, 0); err == nil || !strings.Contains(err.Error(), "locals->count has a location this compiler cannot read: DW_OP_le") {
		t.Errorf("%s: error %v, want DW_OP_le unread", src, err)
	}
}

// entryValueKernel's n, after the call that took rdi, is only its value
// on entry (gcc -O2's DW_OP_entry_value), which nothing keeps at mark.
const entryValueKernel = `__attribute__((noinline)) long g(long x) { __asm__ volatile("" : : : "memory"); return x * 3; }
__attribute__((noinline)) long work(long n)
{
	long r = g(n * 7);
	__asm__ volatile(".globl mark\nmark:");
	return r + 1;
}
int main(int argc, char **argv) { (void)argv; return (int)work(argc); }
`

// TestLocalsEntryValue: a variable available only as an entry value is
// read at the function's first instruction, and refused past it, by
// the checker and in -lv alike, when its caller's call site does not
// give it either.
func TestLocalsEntryValue(t *testing.T) {
	bin, addr := buildMarked(t, "gcc", "-O2", entryValueKernel)
	probe := fmt.Sprintf("kinst::work:%d", addr["mark"]-addr["work"])

	ty, err := dwarftypes.OpenFile(bin, "kernel")
	if err != nil {
		t.Fatal(err)
	}
	defer ty.Close()
	sc, err := ty.Scope(addr["mark"])
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := sc.Lookup("n"); !ok || len(l.Loc) == 0 || l.Loc[0].Code != dwarfexpr.OpEntryValue {
		t.Skipf("gcc put n at mark elsewhere than in an entry value: %+v", l)
	}

	h, err := dtrace.Open(&dtrace.Config{BTF: "none", Kernel: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if _, err := h.Compile(dtrace.Name, "kinst::work:0 { trace(locals->n); }", 0); err != nil {
		t.Errorf("at the first instruction: %v", err)
	}
	const why = "available only as its value on entry to the function (DW_OP_entry_value (DW_OP_reg5)), which nothing keeps past the function's first instruction"
	want := "locals->n is not available at " + probe + ": " + why
	if _, err := h.Compile(dtrace.Name, probe+" { trace(locals->n); }", 0); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s: error %v, want %q", probe, err, want)
	}
	lp, err := h.Compile(dtrace.Name, probe, dtrace.NoCode)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := h.ListProbes(&out, true, lp); err != nil {
		t.Fatal(err)
	}
	// main's call passes its own argc's entry value, which its own
	// caller's call site would have to give.
	if l := "\t\tlocals->n: long int (parameter; " + why + "; nor from its callers: at the call returning to 0x"; !strings.Contains(out.String(), l) {
		t.Errorf("-lv lacks %q:\n%s", l, out.String())
	}
}

// buildMarked builds the C program src with cc at the optimisation
// level opt, with DWARF and not position-independent, and returns it
// and its symbols' addresses.
func buildMarked(t *testing.T, cc, opt, src string) (bin string, addr map[string]uint64) {
	t.Helper()
	path, err := exec.LookPath(cc)
	if err != nil {
		t.Skip("no " + cc)
	}
	dir := t.TempDir()
	c := filepath.Join(dir, "k.c")
	bin = filepath.Join(dir, "k")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(path, opt, "-g", "-fno-pie", "-no-pie", "-o", bin, c).CombinedOutput(); err != nil {
		t.Skipf("%s: %v\n%s", cc, err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	addr = map[string]uint64{}
	for _, s := range syms {
		addr[s.Name] = s.Value
	}
	return bin, addr
}
