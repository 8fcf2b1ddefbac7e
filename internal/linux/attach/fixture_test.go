package attach

import (
	"debug/elf"
	"testing"

	"github.com/kdtrace/kdtrace/internal/amd64"
	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// fixtureProgram is the traced program of the tests: for each line of
// stdin holding a number n, it calls work n times and other 2n times,
// calls libc's getpid once, then prints the sum and, with a USDT probe, fires fixture:tick n times
// (two points, one semaphore).
const fixtureProgram = `#define _SDT_HAS_SEMAPHORES 1
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#ifdef WITH_SDT
#include <sys/sdt.h>
unsigned short fixture_tick_semaphore __attribute__((section(".probes")));
#endif

volatile long sink;

/* Straight-line code: every instruction runs on every call. */
__attribute__((noinline)) long work(long a) {
	long x = a * 7 + 3;
	sink = x ^ (a << 3);
	return x + sink;
}

/* A system call made by hand, whose syscall instruction no uprobe may
   trace. */
__attribute__((noinline)) long raw_getppid(void) {
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "0"(110L) : "rcx", "r11", "memory");
	return r;
}

/* An atomic add, whose lock prefix uprobes refuse. */
__attribute__((noinline)) long locked(long *p) {
	return __atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST);
}

__attribute__((noinline)) long other(long a) {
	sink += a;
	return sink;
}

int main(void) {
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		long n = atol(line), sum = 0;
		if (getpid() < 0) /* a call into libc per line */
			sum = -1;
		for (long i = 0; i < n; i++)
			sum += work(i);
		for (long i = 0; i < 2 * n; i++)
			sum += other(i);
#ifdef WITH_SDT
		for (long i = 0; i < n; i++) {
			if (i % 2)
				DTRACE_PROBE1(fixture, tick, i);
			else
				DTRACE_PROBE1(fixture, tick, -i);
		}
		printf("%ld %d\n", sum, (int)fixture_tick_semaphore);
#else
		printf("%ld\n", sum);
#endif
		fflush(stdout);
	}
	return 0;
}
`

// buildFixture builds fixtureProgram, with its USDT probe if sdt is
// set, and returns its path.
func buildFixture(t *testing.T, sdt bool) string {
	t.Helper()
	if sdt {
		return gcctest.Build(t, t.TempDir(), "fixture", fixtureProgram, "-DWITH_SDT")
	}
	return gcctest.Build(t, t.TempDir(), "fixture", fixtureProgram)
}

// function returns the symbol of function name in file, from its
// symbol table or else its dynamic symbols, and its instructions.
// codeOf returns the bytes of function symbol s of file.
func codeOf(t testing.TB, file string, s elf.Symbol) []byte {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	code := make([]byte, s.Size)
	sec := f.Sections[s.Section]
	if _, err := sec.ReadAt(code, int64(s.Value-sec.Addr)); err != nil {
		t.Fatal(err)
	}
	return code
}

func function(t testing.TB, file, name string) (elf.Symbol, []amd64.Inst) {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	for _, s := range append(syms, dyn...) {
		if s.Name != name || elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		code := make([]byte, s.Size)
		sec := f.Sections[s.Section]
		if _, err := sec.ReadAt(code, int64(s.Value-sec.Addr)); err != nil {
			t.Fatal(err)
		}
		insts, err := amd64.Decode(code, s.Value)
		if err != nil {
			t.Fatal(err)
		}
		return s, insts
	}
	t.Fatalf("%s has no function %s", file, name)
	return elf.Symbol{}, nil
}

// midInstruction returns an offset in function sym that is inside an
// instruction, and the boundaries either side of it.
func midInstruction(t *testing.T, sym elf.Symbol, insts []amd64.Inst) (off, below, above uint64) {
	t.Helper()
	for i, in := range insts {
		if in.Len > 1 && i+1 < len(insts) {
			return in.Addr + 1 - sym.Value, in.Addr - sym.Value, insts[i+1].Addr - sym.Value
		}
	}
	t.Fatalf("%s has no instruction longer than a byte", sym.Name)
	return
}
