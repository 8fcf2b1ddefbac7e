package main

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/dof"
)

// gProv is a provider with a probe of arguments, one whose name has a
// dash, one no clause enables, whose is-enabled test must fail, and one
// whose arguments are translated, swapped.
const gProv = `provider kd_test {
	probe go(int, char *);
	probe all__done();
	probe unused(int);
	probe swap(int i, int j) : (int j, int i);
};
`

// gProgram fires its probes in main and in foo, behind their
// is-enabled tests, and prints nothing: kdtrace -c gives it the test's
// standard output. Its strings are on its stack, where the probes can
// read them: a page of .rodata the program has not touched is not
// mapped yet, and a probe cannot fault it in.
const gProgram = `#include "prov.h"

static __attribute__((noinline)) void
foo(int i)
{
	char where[] = "in foo";

	if (KD_TEST_GO_ENABLED())
		KD_TEST_GO(i, where);
}

int
main(int argc, char **argv)
{
	char where[] = "in main";
	int i;

	if (KD_TEST_UNUSED_ENABLED())
		KD_TEST_UNUSED(99);
	for (i = 0; i < argc + 1; i++)
		KD_TEST_GO(i, where);
	foo(argc + 6);
	KD_TEST_SWAP(1, 2);
	KD_TEST_ALL_DONE();
	return (0);
}
`

// TestUSDTLink builds a program the dtrace way, -h for the header, cc,
// -G over its object, cc to link both, and traces it with -c: its
// probes fire where the program marks them, named by module, function
// and name, the probe no clause enables is not enabled, and the
// arguments are translated as the provider declares, from the DOF -G
// linked into the program.
func TestUSDTLink(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("-G links for Linux")
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil && runtime.GOARCH == "amd64" {
		t.Skip("no <sys/sdt.h> (systemtap-sdt-dev)")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(name, text string) {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("prov.d", gProv)
	write("test.c", gProgram)
	kdtrace := func(args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if st := run(append([]string{"dtrace"}, args...), &stdout, &stderr); st != 0 {
			t.Fatalf("dtrace %q: status %d: %s", args, st, stderr.String())
		}
	}
	cc := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %q: %v\n%s", args, err, out)
		}
	}
	kdtrace("-h", "-s", "prov.d")
	cc("-O2", "-c", "test.c")
	kdtrace("-G", "-s", "prov.d", "test.o")
	cc("-o", "test", "test.o", "prov.o")

	// prov.o carries the provider's DOF: each probe in each function,
	// at offsets from the function's start, where it fires and where
	// its is-enabled test reads its semaphore.
	f, err := elf.Open("prov.o")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Type != elf.ET_REL {
		t.Errorf("prov.o is %v, want ET_REL", f.Type)
	}
	sec := f.Section(".SUNW_dof")
	if sec == nil {
		t.Fatal("prov.o has no .SUNW_dof")
	}
	b, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	df, err := dof.Read(b, nil)
	if err != nil {
		t.Fatalf(".SUNW_dof: %v", err)
	}
	p, err := df.Program()
	if err != nil {
		t.Fatal(err)
	}
	type probe struct {
		Func, Name     string
		NArgs          []string
		NOffs, NEnOffs int
	}
	var got []probe
	for _, pv := range p.Providers {
		if pv.Name != "kd_test" {
			t.Errorf("provider %q, want kd_test", pv.Name)
		}
		for _, pr := range pv.Probes {
			got = append(got, probe{pr.Func, pr.Name, pr.NArgs, len(pr.Offs), len(pr.EnOffs)})
		}
	}
	want := []probe{
		{"foo", "go", []string{"int", "char *"}, 1, 1},
		{"main", "go", []string{"int", "char *"}, 1, 0},
		{"main", "all-done", nil, 1, 0},
		{"main", "swap", []string{"int", "int"}, 1, 0},
		{"main", "unused", []string{"int"}, 1, 1},
	}
	sortProbes := cmp.Transformer("sort", func(ps []probe) []probe {
		out := append([]probe(nil), ps...)
		for i := range out {
			for j := i + 1; j < len(out); j++ {
				if out[j].Func+out[j].Name < out[i].Func+out[i].Name {
					out[i], out[j] = out[j], out[i]
				}
			}
		}
		return out
	})
	if d := cmp.Diff(want, got, sortProbes); d != "" {
		t.Errorf("prov.o's probes (-want +got):\n%s", d)
	}

	needTracing(t)
	script := filepath.Join(dir, "trace.d")
	write(script, `kd_test$target:::go
{
	printf("%s:%s:%s %d %s\n", probemod, probefunc, probename, arg0, copyinstr(arg1));
}

kd_test$target:::swap
{
	printf("%s:%s:%s %d %d %d %d\n", probemod, probefunc, probename, arg0, arg1, args[0], args[1]);
}

kd_test$target:::all-done
{
	printf("%s:%s:%s\n", probemod, probefunc, probename);
}
`)
	var stdout, stderr bytes.Buffer
	if st := run([]string{"dtrace", "-c", "./test", "-qs", script}, &stdout, &stderr); st != 0 {
		t.Fatalf("status %d: %s", st, stderr.String())
	}
	wantOut := `test:main:go 0 in main
test:main:go 1 in main
test:foo:go 7 in foo
test:main:swap 2 1 2 1
test:main:all-done

`
	if d := cmp.Diff(wantOut, stdout.String()); d != "" {
		t.Errorf("trace (-want +got):\n%s\nstderr: %s", d, stderr.String())
	}
}

// TestUSDTFork traces a program that forks: a description that names
// the provider of any process fires in the child too, one that names
// the process's alone does not.
func TestUSDTFork(t *testing.T) {
	needTracing(t)
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil && runtime.GOARCH == "amd64" {
		t.Skip("no <sys/sdt.h> (systemtap-sdt-dev)")
	}
	t.Chdir(t.TempDir())
	os.WriteFile("prov.d", []byte(gProv), 0o644)
	os.WriteFile("fork.c", []byte(`#include <sys/wait.h>
#include <unistd.h>
#include "prov.h"

int
main(void)
{
	KD_TEST_GO(1, 0);
	if (fork() == 0) {
		KD_TEST_GO(2, 0);
		return (0);
	}
	(void) wait(NULL);
	KD_TEST_GO(3, 0);
	return (0);
}
`), 0o644)
	for _, args := range [][]string{{"-h", "-s", "prov.d"}, {"-G", "-s", "prov.d", "fork.o"}} {
		if args[0] == "-G" {
			if out, err := exec.Command("gcc", "-c", "fork.c").CombinedOutput(); err != nil {
				t.Fatalf("gcc: %v\n%s", err, out)
			}
		}
		var stdout, stderr bytes.Buffer
		if st := run(append([]string{"dtrace"}, args...), &stdout, &stderr); st != 0 {
			t.Fatalf("dtrace %q: %s", args, stderr.String())
		}
	}
	if out, err := exec.Command("gcc", "-o", "fork", "fork.o", "prov.o").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, tt := range []struct{ desc, want string }{
		{"kd_test*:::go", "\n1\n2\n3\n"},
		{"kd_test$target:::go", "\n1\n3\n"},
	} {
		var stdout, stderr bytes.Buffer
		st := run([]string{"dtrace", "-c", "./fork", "-qn", tt.desc + ` { printf("%d\n", arg0); }`}, &stdout, &stderr)
		if st != 0 {
			t.Fatalf("%s: status %d: %s", tt.desc, st, stderr.String())
		}
		// The child's CPU may be another, whose records come in
		// their own order.
		lines := strings.SplitAfter(stdout.String(), "\n")
		sort.Strings(lines)
		if d := cmp.Diff(tt.want, strings.Join(lines, "")); d != "" {
			t.Errorf("%s (-want +got, sorted):\n%s\nstderr: %s", tt.desc, d, stderr.String())
		}
	}
}

// TestUSDTLinkErrors checks -G's refusals, in dtrace's words.
func TestUSDTLinkErrors(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("prov.d", []byte(gProv), 0o644)
	os.WriteFile("other.d", []byte("provider other { probe x(); };\n"), 0o644)
	os.WriteFile("notelf", []byte("just text\n"), 0o644)
	os.WriteFile("bad.c", []byte("#include <sys/sdt.h>\nint main(void) { DTRACE_PROBE(kd_test, nosuch); return 0; }\n"), 0o644)
	os.WriteFile("stub.c", []byte("extern void __dtrace_kd_test___go(int, char *);\nint main(void) { __dtrace_kd_test___go(1, 0); return 0; }\n"), 0o644)
	os.WriteFile("good.c", []byte("#include <sys/sdt.h>\nint main(void) { DTRACE_PROBE(kd_test, all__done); return 0; }\n"), 0o644)
	for _, c := range []string{"bad.c", "stub.c", "good.c"} {
		if out, err := exec.Command("gcc", "-c", c).CombinedOutput(); err != nil {
			t.Skipf("gcc: %v\n%s", err, out)
		}
	}
	for _, tt := range []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"-G"}, 2, "dtrace: -G requires one or more scripts or enabling options\n"},
		{[]string{"-G", "-s", "prov.d", "nosuch.o"}, 1, "dtrace: failed to link script prov.d: failed to open nosuch.o: No such file or directory\n"},
		{[]string{"-G", "-s", "prov.d", "notelf"}, 1, "dtrace: failed to link script prov.d: invalid file type: notelf\n"},
		{[]string{"-G", "-s", "prov.d", "bad.o"}, 1, "dtrace: failed to link script prov.d: no such probe nosuch\n"},
		{[]string{"-G", "-s", "other.d", "bad.o"}, 1, "dtrace: failed to link script other.d: no such provider kd_test\n"},
		{[]string{"-G", "-s", "other.d"}, 1, "dtrace: failed to link script other.d: No probe sites found for declared provider\n"},
		{[]string{"-G", "-s", "prov.d", "good.o", "-x", "linktype=text"}, 1, "dtrace: failed to link script prov.d: invalid link type text\n"},
		{[]string{"-G", "-s", "prov.d", "stub.o"}, 1, "dtrace: failed to link script prov.d: stub.o calls __dtrace_kd_test___go: probes marked by dtrace's stubs are not linked here; make the header with -x headerstyle=notes\n"},
	} {
		var stdout, stderr bytes.Buffer
		st := run(append([]string{"dtrace"}, tt.args...), &stdout, &stderr)
		if st != tt.status || stderr.String() != tt.stderr {
			t.Errorf("dtrace %q: status %d, stderr %q; want %d, %q", tt.args, st, stderr.String(), tt.status, tt.stderr)
		}
	}
	for _, name := range []string{"prov.o", "other.o"} {
		if _, err := os.Stat(name); err == nil {
			t.Errorf("a failed -G left %s", name)
		}
	}
}

// TestLinkNames checks the files -G writes, named as dtrace's link_prog
// names them.
func TestLinkNames(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("a.d", []byte("BEGIN { exit(0); }\n"), 0o644)
	os.MkdirAll("sub", 0o755)
	os.WriteFile("sub/b.d", []byte("END { trace(1); }\n"), 0o644)
	for _, tt := range []struct {
		args  []string
		files []string
	}{
		{[]string{"-s", "a.d"}, []string{"a.o"}},
		{[]string{"-s", "sub/b.d"}, []string{"b.o"}},
		{[]string{"-s", "a.d", "-o", "out.o"}, []string{"out.o"}},
		{[]string{"-n", "BEGIN"}, []string{"d.out"}},
		{[]string{"-s", "a.d", "-n", "BEGIN"}, []string{"a.o", "d.out.1"}},
		{[]string{"-s", "a.d", "-s", "sub/b.d", "-o", "both.o"}, []string{"both.o"}},
	} {
		var stdout, stderr bytes.Buffer
		if st := run(append([]string{"dtrace", "-G"}, tt.args...), &stdout, &stderr); st != 0 {
			t.Errorf("-G %q: status %d: %s", tt.args, st, stderr.String())
			continue
		}
		var files []string
		for _, e := range mustReadDir(t, ".") {
			if !e.IsDir() && !strings.HasSuffix(e.Name(), ".d") {
				files = append(files, e.Name())
				if _, err := elf.Open(e.Name()); err != nil {
					t.Errorf("-G %q wrote %s, not an ELF object: %v", tt.args, e.Name(), err)
				}
				os.Remove(e.Name())
			}
		}
		if d := cmp.Diff(tt.files, files); d != "" {
			t.Errorf("-G %q wrote (-want +got):\n%s", tt.args, d)
		}
	}
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return es
}
