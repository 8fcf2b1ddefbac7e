package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dif/vm"
)

// perDescProgram's functions take pointers to structs that lay out
// member y differently: offset, size and sign. fa2 takes fa's.
const perDescProgram = `struct a { int x; long y; };             /* y: long at 8 */
struct b { char pad[32]; char y; };        /* y: char at 32 */
struct c { int x; unsigned short y; };     /* y: unsigned short at 4 */
struct d { char pad[12]; int y; };         /* y: int at 12 */

__attribute__((noinline)) long fa(struct a *p) { return p->y; }
__attribute__((noinline)) long fa2(struct a *p) { return p->y + 1; }
__attribute__((noinline)) long fb(struct b *p) { return p->y; }
__attribute__((noinline)) long fc(struct c *p) { return p->y; }
__attribute__((noinline)) long fd(struct d *p) { return p->y; }

int main(void) {
	struct a a = {0}; struct b b = {0}; struct c c = {0}; struct d d = {0};
	return fa(&a) + fa2(&a) + fb(&b) + fc(&c) + fd(&d);
}
`

// buildFixture compiles a C program with gcc -g, skipping the test
// without gcc.
func buildFixture(t *testing.T, name, src string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	c := filepath.Join(dir, name+".c")
	if err := os.WriteFile(c, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, name)
	if out, err := exec.Command(gcc, "-g", "-O1", "-o", exe, c).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return exe
}

// difoLoads reads dtrace -S output: for each DIFO, its title's probe
// and kind, the integer constants it sets and its loads, as
// "fbt::fa:entry action 1: 0x8 ldx".
func difoLoads(listing string) []string {
	setx := regexp.MustCompile(`\bsetx .*! (0x[0-9a-f]+)$`)
	load := regexp.MustCompile(`^\d+: [0-9a-f]{8}\s+(u?ld[su]?[bhwx]) `)
	var out []string
	for _, block := range strings.Split(listing, "\nDIFO ")[1:] {
		lines := strings.Split(block, "\n")
		title, _, _ := strings.Cut(lines[0], " (")
		parts := []string{title + ":"}
		for _, l := range lines[1:] {
			if m := setx.FindStringSubmatch(l); m != nil {
				parts = append(parts, m[1])
			}
			if m := load.FindStringSubmatch(l); m != nil {
				parts = append(parts, m[1])
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out
}

// TestPerDescription checks that a clause is compiled once per probe
// description, as dtrace compiles it: over a gcc -g image's fbt probes,
// args[0]->y reads each function's own struct's y, at its offset and
// with its load, in -S's listing and in the DOF of -G run by the
// in-process DIF machine over memory laid out like each struct.
func TestPerDescription(t *testing.T) {
	exe := buildFixture(t, "perdesc", perDescProgram)
	clause := "fbt::fa:entry, fbt::fb:entry, fbt::fc:entry, fbt::fd:entry, fbt::fa2:entry { trace(args[0]->y); }"

	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "--kernel", exe, "-e", "-S", "-n", clause}, &stdout, &stderr); st != 0 {
		t.Fatalf("-S: exit %d: %s", st, stderr.String())
	}
	want := []string{
		"fbt::fa:entry action 1: 0x8 ldx",
		"fbt::fb:entry action 1: 0x20 ldsb",
		"fbt::fc:entry action 1: 0x4 lduh",
		"fbt::fd:entry action 1: 0xc ldsw",
		"fbt::fa2:entry action 1: 0x8 ldx",
	}
	if diff := cmp.Diff(want, difoLoads(stderr.String())); diff != "" {
		t.Errorf("-S (-want +got):\n%s\n%s", diff, stderr.String())
	}

	// -d prints the clause as written, once.
	stdout.Reset()
	if st := run([]string{"kdtrace", "--kernel", exe, "-e", "-d", "-n", clause}, &stdout, &stderr); st != 0 {
		t.Fatalf("-d: exit %d: %s", st, stderr.String())
	}
	wantD := "fbt::fa:entry,\nfbt::fb:entry,\nfbt::fc:entry,\nfbt::fd:entry,\nfbt::fa2:entry\n{\n        trace(((args[0x0])->y));\n}\n\n"
	if stdout.String() != wantD {
		t.Errorf("-d:\n%s\nwant:\n%s", stdout.String(), wantD)
	}

	// The DOF the kernel would take, run over each struct's memory: y
	// is -2 (a), -3 (b), 0xfffe (c), -4 (d); every other byte is 0x55.
	p := loadDOF(t, "--kernel", exe, "-n", clause)
	mem := func(size, off int, put func([]byte)) []byte {
		m := bytes.Repeat([]byte{0x55}, size)
		put(m[off:])
		return m
	}
	kmem := vm.Segments{
		{Addr: 0x10000, Data: mem(16, 8, func(b []byte) { binary.LittleEndian.PutUint64(b, uint64(0xfffffffffffffffe)) })},
		{Addr: 0x20000, Data: mem(33, 32, func(b []byte) { b[0] = 0xfd })},
		{Addr: 0x30000, Data: mem(8, 4, func(b []byte) { binary.LittleEndian.PutUint16(b, 0xfffe) })},
		{Addr: 0x40000, Data: mem(16, 12, func(b []byte) { binary.LittleEndian.PutUint32(b, 0xfffffffc) })},
	}
	runs := []struct {
		probe string
		addr  uint64
		want  int64
	}{
		{"fbt::fa:entry", 0x10000, -2},
		{"fbt::fb:entry", 0x20000, -3},
		{"fbt::fc:entry", 0x30000, 0xfffe},
		{"fbt::fd:entry", 0x40000, -4},
		{"fbt::fa2:entry", 0x10000, -2},
	}
	if len(p.ECBs) != len(runs) {
		t.Fatalf("DOF has %d ECBs, want %d", len(p.ECBs), len(runs))
	}
	for i, r := range runs {
		ecb := p.ECBs[i]
		if ecb.Probe.String() != r.probe || len(ecb.Actions) != 1 {
			t.Errorf("ECB %d: %s with %d actions, want %s with 1", i, ecb.Probe, len(ecb.Actions), r.probe)
			continue
		}
		m := vm.New(&vm.Config{Kernel: kmem})
		m.BeginFiring()
		m.BeginClause()
		v, err := m.Run(ecb.Actions[0].DIFO, &vm.Context{Args: []uint64{r.addr}})
		if err != nil || int64(v) != r.want {
			t.Errorf("%s: args[0]->y = %#x, %v; want %#x", r.probe, v, err, uint64(r.want))
		}
	}
	if got := p.ECBs[0].Actions[0].DIFO.Ret; got != dif.IntType(8) {
		t.Errorf("fbt::fa:entry's DIFO returns %+v, want a long", got)
	}

	// A description that matches functions of other prototypes: dtrace
	// does not vouch for their arguments' types.
	stderr.Reset()
	multi := "fbt::f*:entry { trace(args[0]->y); }"
	wantErr := "kdtrace: invalid probe specifier " + multi + ": in action list: args[ ] may not be referenced " +
		"because probe description fbt::f*:entry matches an unstable set of probes\n"
	if st := run([]string{"kdtrace", "--kernel", exe, "-e", "-n", multi}, &stdout, &stderr); st != 1 || stderr.String() != wantErr {
		t.Errorf("%s: exit %d, %q; want 1, %q", multi, st, stderr.String(), wantErr)
	}
}

// perDescUSDTProgram has a USDT probe whose notes type its argument
// differently in two functions: an int in narrow, an unsigned long in
// wide.
const perDescUSDTProgram = `#include <sys/sdt.h>
#include <unistd.h>

__attribute__((noinline)) void narrow(int a) { DTRACE_PROBE1(pd_prov, hit, a); }
__attribute__((noinline)) void wide(unsigned long b) { DTRACE_PROBE1(pd_prov, hit, b); }

int main(int argc, char **argv) {
	for (;;) {
		narrow(argc);
		wide(argc);
		pause();
	}
}
`

// TestPerDescriptionUSDT checks that each description of a USDT probe
// gets the types its notes give args[] in the functions it names, and
// that one naming both gets D_ARGS_MULTI.
func TestPerDescriptionUSDT(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("USDT probes are read from Linux's /proc")
	}
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		if _, err := os.Stat("/usr/include/sys/sdt.h"); err != nil {
			t.Skip("no <sys/sdt.h>")
		}
	}
	exe := buildFixture(t, "usdt", perDescUSDTProgram)
	cmd := exec.Command(exe)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := mappedPID(t, cmd)

	var stdout, stderr bytes.Buffer
	clause := "pd_prov$target::narrow:hit, pd_prov$target::wide:hit { trace(args[0]); }"
	if st := run([]string{"kdtrace", "--btf", "none", "-e", "-S", "-p", pid, "-n", clause}, &stdout, &stderr); st != 0 {
		t.Fatalf("-S: exit %d: %s", st, stderr.String())
	}
	ret := regexp.MustCompile(`(?m)^DIFO (\S+) action 1 \(DIFEXPR\) returns D type \(integer\) \(size (\d)\)$`)
	var got []string
	for _, m := range ret.FindAllStringSubmatch(stderr.String(), -1) {
		got = append(got, m[1]+" "+m[2])
	}
	want := []string{"pd_prov" + pid + "::narrow:hit 4", "pd_prov" + pid + "::wide:hit 8"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("-S (-want +got):\n%s\n%s", diff, stderr.String())
	}

	stderr.Reset()
	multi := "pd_prov$target:::hit { trace(args[0]); }"
	wantErr := "kdtrace: invalid probe specifier " + multi + ": in action list: args[ ] may not be referenced " +
		"because probe description pd_prov" + pid + ":::hit matches an unstable set of probes\n"
	if st := run([]string{"kdtrace", "--btf", "none", "-e", "-p", pid, "-n", multi}, &stdout, &stderr); st != 1 || stderr.String() != wantErr {
		t.Errorf("%s: exit %d, %q; want 1, %q", multi, st, stderr.String(), wantErr)
	}
}
