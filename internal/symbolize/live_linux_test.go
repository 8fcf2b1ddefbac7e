//go:build linux

package symbolize_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/debuginfod"
	"github.com/kdtrace/kdtrace/internal/debuginfod/debuginfodtest"
	"github.com/kdtrace/kdtrace/internal/gcctest"
	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/symbolize"
)

// fixture is a running fixture program and the addresses it printed.
type fixture struct {
	path  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Scanner
	addr  map[string]uint64
}

func startFixture(t testing.TB, flags ...string) *fixture {
	t.Helper()
	path := gcctest.Build(t, t.TempDir(), "fixture", fixtureProgram, flags...)
	return startCommand(t, exec.Command(path), path)
}

// startCommand starts cmd, a build of fixtureProgram at path, and reads
// the addresses it prints.
func startCommand(t testing.TB, cmd *exec.Cmd, path string) *fixture {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f := &fixture{path: path, cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout), addr: map[string]uint64{}}
	t.Cleanup(func() { f.stop() })
	f.readAddrs(t)
	return f
}

// readAddrs reads the addresses the fixture prints up to its line
// "end".
func (f *fixture) readAddrs(t testing.TB) {
	t.Helper()
	for f.out.Scan() {
		name, v, _ := strings.Cut(f.out.Text(), " ")
		if name == "end" {
			return
		}
		a, err := strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
		if err != nil {
			t.Fatalf("fixture printed %q", f.out.Text())
		}
		f.addr[name] = a
	}
	t.Fatalf("the fixture stopped before printing its addresses: %v", f.out.Err())
}

func (f *fixture) pid() uint64 { return uint64(f.cmd.Process.Pid) }

// stop closes the fixture's stdin and waits for it to exit.
func (f *fixture) stop() {
	if f.cmd.ProcessState == nil {
		f.stdin.Close()
		f.cmd.Wait()
	}
}

// fixtureLookups are the lookups every build of the fixture answers.
func fixtureLookups(f *fixture) []lookup {
	a := f.addr
	return []lookup{
		{"a function", a["leaf"], "fixture", "leaf", a["leaf"]},
		{"inside a function", a["leaf"] + 3, "fixture", "leaf", a["leaf"]},
		{"a static function (.symtab)", a["helper"] + 1, "fixture", "helper", a["helper"]},
		{"main", a["main"], "fixture", "main", a["main"]},
		{"a .bss variable", a["counter"] + 2, "fixture", "counter", a["counter"]},
		{"a .data array", a["table"] + 100, "fixture", "table", a["table"]},
		{"libc", a["getppid"] + 4, "libc.so.6", "getppid", a["getppid"]},
		{"the heap", a["heap"], "", "-", 0},
		{"the stack", a["stack"], "", "-", 0},
		{"an unmapped page", 0x1000, "", "-", 0},
	}
}

// TestFixture looks up addresses of a running gcc program, built as a
// fixed-address executable and as a PIE, that the program printed.
func TestFixture(t *testing.T) {
	for _, build := range []struct {
		name  string
		flags []string
	}{
		{"exec", nil},
		{"pie", []string{"-fpie", "-pie"}},
	} {
		t.Run(build.name, func(t *testing.T) {
			f := startFixture(t, build.flags...)
			if typ := elfFile(t, f.path).Type; (typ == elf.ET_DYN) != (build.name == "pie") {
				t.Fatalf("gcc %v built an ELF of type %v", build.flags, typ)
			}
			s := symbolize.New(symbolize.Config{})
			defer s.Close()
			if err := s.Grab(int(f.pid())); err != nil {
				t.Fatal(err)
			}
			tests := fixtureLookups(f)
			base := mappedBase(t, f)
			tests = append(tests, lookup{"the ELF header, in no symbol", base, "fixture", "", 0})
			check(t, s, f.pid(), tests)

			// The addresses agree with the fixture's symbol table and
			// where its maps show it loaded.
			if v := elfSymbol(t, f.path, "leaf") - firstLoad(t, f.path) + base; v != f.addr["leaf"] {
				t.Errorf("leaf's symbol and the maps place it at %#x; it is at %#x", v, f.addr["leaf"])
			}

			// Grabbed, it resolves after it exits; another System,
			// which did not grab it, does not.
			f.stop()
			check(t, s, f.pid(), tests)
			late := symbolize.New(symbolize.Config{})
			defer late.Close()
			if got, ok := late.User(f.pid(), f.addr["leaf"]); ok {
				t.Errorf("an exited process's address was found: %+v", got)
			}
		})
	}
}

// TestUngrabbed looks a process up without grabbing it first.
func TestUngrabbed(t *testing.T) {
	f := startFixture(t, "-fpie", "-pie")
	s := symbolize.New(symbolize.Config{})
	defer s.Close()
	check(t, s, f.pid(), fixtureLookups(f))
	if _, ok := s.User(0, f.addr["leaf"]); ok {
		t.Error("pid 0 found a symbol")
	}
}

// TestDeleted looks up a process whose executable was removed after it
// started: the file is read through /proc/PID/map_files.
func TestDeleted(t *testing.T) {
	f := startFixture(t)
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/map_files/%x-%x", f.pid(), mappedBase(t, f), mappedBase(t, f)+0x1000)); err != nil {
		t.Skipf("map_files cannot be followed (it takes CAP_SYS_ADMIN): %v", err)
	}
	if err := os.Remove(f.path); err != nil {
		t.Fatal(err)
	}
	s := symbolize.New(symbolize.Config{})
	defer s.Close()
	if err := s.Grab(int(f.pid())); err != nil {
		t.Fatal(err)
	}
	check(t, s, f.pid(), fixtureLookups(f)[:3])
}

// TestVDSO looks up a function of the vDSO this test's process maps.
func TestVDSO(t *testing.T) {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip(err)
	}
	ms, err := symbolize.ParseMaps(maps)
	if err != nil {
		t.Fatal(err)
	}
	var vdso *symbolize.Mapping
	for i := range ms {
		if ms[i].Path == "[vdso]" {
			vdso = &ms[i]
		}
	}
	if vdso == nil {
		t.Skip("no vDSO mapped")
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Skip(err)
	}
	defer mem.Close()
	img := make([]byte, vdso.End-vdso.Start)
	if _, err := mem.ReadAt(img, int64(vdso.Start)); err != nil {
		t.Skip(err)
	}
	ef, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := ef.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var fn elf.Symbol
	for _, sym := range syms {
		if sym.Name == "__vdso_clock_gettime" {
			fn = sym
		}
	}
	if fn.Name == "" {
		t.Skip("the vDSO has no __vdso_clock_gettime")
	}
	var load uint64
	for _, p := range ef.Progs {
		if p.Type == elf.PT_LOAD {
			load = p.Vaddr
			break
		}
	}
	addr := vdso.Start + fn.Value - load
	s := symbolize.New(symbolize.Config{})
	defer s.Close()
	got, ok := s.User(uint64(os.Getpid()), addr+2)
	// Of the aliases at the address, the one with fewer leading
	// underscores.
	want := consumer.Symbol{Object: "[vdso]", Name: "clock_gettime", Value: addr}
	if !ok || got != want {
		t.Errorf("User(self, __vdso_clock_gettime+2) = %+v, %v; want %+v", got, ok, want)
	}
}

// mappedBase returns where the fixture's file starts in its memory.
func mappedBase(t *testing.T, f *fixture) uint64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", f.pid()))
	if err != nil {
		t.Fatal(err)
	}
	ms, err := symbolize.ParseMaps(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Path == f.path && m.Offset == 0 {
			return m.Start
		}
	}
	t.Fatalf("%s is not mapped at offset 0:\n%s", f.path, b)
	return 0
}

func elfFile(t *testing.T, path string) *elf.File {
	t.Helper()
	ef, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ef.Close() })
	return ef
}

func elfSymbol(t *testing.T, path, name string) uint64 {
	t.Helper()
	syms, err := elfFile(t, path).Symbols()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range syms {
		if s.Name == name {
			return s.Value
		}
	}
	t.Fatalf("%s has no symbol %s", path, name)
	return 0
}

// firstLoad returns the address of the file's first PT_LOAD segment,
// which the mapping at offset 0 holds.
func firstLoad(t *testing.T, path string) uint64 {
	t.Helper()
	for _, p := range elfFile(t, path).Progs {
		if p.Type == elf.PT_LOAD {
			return p.Vaddr
		}
	}
	t.Fatalf("%s has no PT_LOAD", path)
	return 0
}

// TestLiveKernel looks up addresses of the running kernel's functions,
// as root sees them in /proc/kallsyms.
func TestLiveKernel(t *testing.T) {
	tab, err := ksym.Kallsyms("/proc/kallsyms", "")
	if err != nil {
		t.Skipf("the kernel's symbols cannot be read: %v", err)
	}
	if tab.ZeroAddrs() {
		t.Skip("/proc/kallsyms shows zero addresses: run as root, or with kptr_restrict 0")
	}
	s := symbolize.New(symbolize.Config{})
	for _, name := range []string{"vfs_read", "schedule", "do_sys_openat2"} {
		syms, err := tab.Lookup(ksym.KernelModule, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		fn := syms[0]
		if fn.Size <= 0x12 {
			t.Errorf("%s is %d bytes long", name, fn.Size)
			continue
		}
		for _, off := range []uint64{0, 0x12, fn.Size - 1} {
			got, ok := s.Kernel(fn.Addr + off)
			want := consumer.Symbol{Object: "kernel", Name: name, Value: fn.Addr}
			if !ok || got != want {
				t.Errorf("Kernel(%s+%#x) = %s, want %s", name, off, format(got, ok, fn.Addr+off), format(want, true, fn.Addr+off))
			}
		}
	}
	k, err := s.KernelTable()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d addressed kernel symbols", k.Len())
	if _, ok := s.Kernel(0x1000); ok {
		t.Error("a user address was found in the kernel")
	}
}

// TestDebugFile looks up a static function of a stripped executable in
// its separate debug file, found by build ID under the debug directory,
// by its .gnu_debuglink beside it, and from elfutils' debuginfod.
func TestDebugFile(t *testing.T) {
	for _, how := range []string{"build-id", "debuglink", "debuginfod"} {
		t.Run(how, func(t *testing.T) {
			for _, tool := range []string{"objcopy", "strip"} {
				if _, err := exec.LookPath(tool); err != nil {
					t.Skipf("no %s: %v", tool, err)
				}
			}
			dir := t.TempDir()
			path := gcctest.Build(t, dir, "fixture", fixtureProgram, "-Wl,--build-id")
			debug := path + ".debug"
			run(t, "objcopy", "--only-keep-debug", path, debug)
			run(t, "strip", "--strip-all", path)
			debugDir := filepath.Join(dir, "debug")
			if how == "build-id" {
				id := buildIDOf(t, path)
				sub := filepath.Join(debugDir, ".build-id", id[:2])
				if err := os.MkdirAll(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(debug, filepath.Join(sub, id[2:]+".debug")); err != nil {
					t.Fatal(err)
				}
			}
			cfg := symbolize.Config{DebugDir: debugDir}
			switch how {
			case "debuglink":
				run(t, "objcopy", "--add-gnu-debuglink="+debug, path)
			case "debuginfod":
				id := buildIDOf(t, path)
				served := t.TempDir()
				if err := os.Rename(debug, filepath.Join(served, "fixture.debug")); err != nil {
					t.Fatal(err)
				}
				srv := debuginfodtest.Start(t, served, id)
				c := &debuginfod.Client{URLs: []string{srv.URL}, CachePath: filepath.Join(t.TempDir(), "cache"), Transfer: debuginfodtest.InProcess}
				cfg.Debuginfod = func(id []byte) string {
					p, err := c.Find(context.Background(), id, debuginfod.Debuginfo)
					if err != nil {
						t.Errorf("debuginfod: %v", err)
					}
					return p
				}
			}
			cmd := exec.Command(path)
			f := startCommand(t, cmd, path)
			s := symbolize.New(cfg)
			defer s.Close()
			check(t, s, f.pid(), fixtureLookups(f)[:6])
		})
	}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// buildIDOf returns the GNU build ID of the file at path in hex.
func buildIDOf(t *testing.T, path string) string {
	t.Helper()
	s := elfFile(t, path).Section(".note.gnu.build-id")
	if s == nil {
		t.Fatalf("%s has no build ID", path)
	}
	b, err := s.Data()
	if err != nil || len(b) < 16+2 {
		t.Fatalf("%s: build ID note %x: %v", path, b, err)
	}
	return fmt.Sprintf("%x", b[16:])
}

// TestConcurrent looks up a process's addresses from several goroutines
// while it is grabbed again, for the race detector.
func TestConcurrent(t *testing.T) {
	f := startFixture(t, "-fpie", "-pie")
	s := symbolize.New(symbolize.Config{})
	defer s.Close()
	tests := fixtureLookups(f)
	done := make(chan bool)
	for range 4 {
		go func() {
			defer func() { done <- true }()
			for range 50 {
				for _, tt := range tests {
					got, ok := s.User(f.pid(), tt.addr)
					if ok != (tt.name != "-") || ok && got.Name != tt.name {
						t.Errorf("%s: User = %+v, %v", tt.what, got, ok)
						return
					}
				}
			}
		}()
	}
	for range 20 {
		if err := s.Grab(int(f.pid())); err != nil {
			t.Error(err)
		}
	}
	for range 4 {
		<-done
	}
}

// dlopenProgram loads libm when told to, after it has been grabbed.
const dlopenProgram = `#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
	char b[8];
	printf("end 0\n");
	fflush(stdout);
	if (read(0, b, 1) != 1)
		return 1;
	void *h = dlopen("libm.so.6", RTLD_NOW);
	printf("cos %p\n", h ? dlsym(h, "cos") : NULL);
	printf("end 0\n");
	fflush(stdout);
	read(0, b, 1);
	return 0;
}
`

// TestRefresh looks up an address of a library a process loaded after
// it was grabbed: its maps are read again.
func TestRefresh(t *testing.T) {
	path := gcctest.Build(t, t.TempDir(), "dlopen", dlopenProgram)
	f := startCommand(t, exec.Command(path), path)
	s := symbolize.New(symbolize.Config{})
	defer s.Close()
	if err := s.Grab(int(f.pid())); err != nil {
		t.Fatal(err)
	}
	if _, err := f.stdin.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	f.readAddrs(t)
	cos := f.addr["cos"]
	if cos == 0 {
		t.Skip("the fixture could not load libm")
	}
	time.Sleep(symbolize.RefreshInterval)
	// cos is a GNU indirect function: dlsym gives the implementation
	// chosen for this CPU (__cos_fma), whose own name is found.
	if got, ok := s.User(f.pid(), cos+1); !ok || got.Object != "libm.so.6" || got.Name == "" || got.Value != cos {
		t.Errorf("User(cos+1) = %+v, %v; want a function of libm.so.6 at %#x", got, ok, cos)
	}
}

// TestMaxOpenFiles checks that a grab holds at most MaxOpenFiles files
// open, reading the others at once, and that their symbols are found
// after the process exits.
func TestMaxOpenFiles(t *testing.T) {
	f := startFixture(t)
	fds := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip(err)
		}
		return len(ents)
	}
	s := symbolize.New(symbolize.Config{MaxOpenFiles: 1})
	defer s.Close()
	before := fds()
	if err := s.Grab(int(f.pid())); err != nil {
		t.Fatal(err)
	}
	if n := fds() - before; n > 1 {
		t.Errorf("the grab holds %d files open", n)
	}
	f.stop()
	check(t, s, f.pid(), fixtureLookups(f))
}

// TestZombie grabs a process again once it has exited but is not yet
// reaped, when its maps are empty: what was read while it lived
// stands.
func TestZombie(t *testing.T) {
	f := startFixture(t)
	s := symbolize.New(symbolize.Config{})
	defer s.Close()
	if err := s.Grab(int(f.pid())); err != nil {
		t.Fatal(err)
	}
	f.stdin.Close()
	maps := fmt.Sprintf("/proc/%d/maps", f.pid())
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(maps); err == nil && len(b) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fixture did not exit")
		}
	}
	if err := s.Grab(int(f.pid())); err != nil {
		t.Fatal(err)
	}
	time.Sleep(symbolize.RefreshInterval)
	check(t, s, f.pid(), fixtureLookups(f))
}
