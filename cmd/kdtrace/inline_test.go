package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
)

// pidNumber is a pid provider's process ID, which changes every run.
var pidNumber = regexp.MustCompile(`\bpid[0-9]+:`)

// TestInlineDemoRewrite checks kdtrace -e -d on the bundled inline
// example against its golden file, the process ID written as $target,
// and that each description the rewrite printed is one the pid provider
// takes back as written.
func TestInlineDemoRewrite(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the bundled demo is a Linux amd64 program")
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := filepath.Join("..", "..")
	demo := filepath.Join(root, "examples", "inline", "demo")
	script := filepath.Join(root, "examples", "inline", "demo.d")
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-e", "-d", "-c", demo, "-s", script}, &stdout, &stderr); st != 0 {
		t.Fatalf("kdtrace -e -d: status %d, stderr %q", st, stderr.String())
	}
	got := pidNumber.ReplaceAllString(stdout.String(), "pid$$target:")
	golden := filepath.Join(root, "testdata", "uinline", "demo.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("kdtrace -e -d -s %s (-want +got):\n%s", script, diff)
	}
	var descs []string
	for _, line := range strings.Split(got, "\n") {
		line, _, _ = strings.Cut(line, " /*") // the rule that placed the site
		if d, ok := strings.CutPrefix(strings.TrimSuffix(line, ","), "pid$target:"); ok {
			descs = append(descs, "pid$target:"+d)
		}
	}
	if len(descs) < 6 {
		t.Fatalf("the rewrite printed %d pid descriptions, want the out-of-line copy's and at least two inline copies' entry and return:\n%s", len(descs), got)
	}
	for _, d := range descs {
		stdout.Reset()
		stderr.Reset()
		if st := run([]string{"kdtrace", "-e", "-c", demo, "-n", d + " { }"}, &stdout, &stderr); st != 0 {
			t.Errorf("kdtrace -e -n '%s { }': status %d, stderr %q", d, st, stderr.String())
		}
	}
	// A function that is not inlined, patterns and offsets are left
	// as written.
	for _, d := range []string{"pid$target:a.out:get:entry", "pid$target:a.out:get:return", "pid$target:a.out:val*:entry", "pid$target:a.out:valid:0"} {
		stdout.Reset()
		stderr.Reset()
		if st := run([]string{"kdtrace", "-e", "-d", "-c", demo, "-n", d + " { }"}, &stdout, &stderr); st != 0 {
			t.Errorf("kdtrace -e -d -n '%s { }': status %d, stderr %q", d, st, stderr.String())
		}
		want := d + "\n{\n}\n\n"
		if got := pidNumber.ReplaceAllString(stdout.String(), "pid$$target:"); got != want {
			t.Errorf("kdtrace -e -d -n '%s { }' printed %q, want %q", d, got, want)
		}
	}
}

// TestInlineREADME runs the README's first command, with kdtrace built
// from this tree in place of go run, and checks that the per-site counts
// the demo's script prints agree with the calls the demo reports.
func TestInlineREADME(t *testing.T) {
	needTracing(t)
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(readme), "```sh\n")
	if !ok {
		t.Fatal("README.md has no sh code block")
	}
	first, _, _ := strings.Cut(rest, "\n")
	args, ok := strings.CutPrefix(first, "go run ./cmd/kdtrace ")
	if !ok || strings.ContainsAny(args, `'"\`) {
		t.Fatalf("README's first command is %q, want go run ./cmd/kdtrace and plain words", first)
	}
	bin := build(t, "kdtrace")
	cmd := exec.Command(bin, strings.Fields(args)...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", first, err, out)
	}
	t.Logf("%s:\n%s", first, out)
	text := string(out)
	m := regexp.MustCompile(`valid\(\) called (\d+) times: (\d+) from get, (\d+) from put, (\d+) through a pointer`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the demo's own counts are missing:\n%s", text)
	}
	calls := map[string]int{"": atoi(t, m[1]), "get": atoi(t, m[2]), "put": atoi(t, m[3]), "valid": atoi(t, m[4])}
	// The sections the script prints: sites as "caller offset count",
	// totals as "entries count" and "returns count".
	sums := map[string]map[string]int{"entries": {}, "returns": {}}
	section := ""
	site := regexp.MustCompile(`^  (\S+) +(\S+) +(\d+)$`)
	total := regexp.MustCompile(`^  (entries|returns) +(\d+)$`)
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "valid() entries"):
			section = "entries"
		case strings.HasPrefix(line, "valid() returns"):
			section = "returns"
		case strings.HasPrefix(line, "valid() in all"):
			section = "total"
		case section == "total" && total.MatchString(line):
			f := total.FindStringSubmatch(line)
			sums[f[1]][""] += atoi(t, f[2])
		case section != "" && section != "total" && site.MatchString(line):
			f := site.FindStringSubmatch(line)
			sums[section][f[1]] += atoi(t, f[3])
		}
	}
	for _, kind := range []string{"entries", "returns"} {
		if diff := cmp.Diff(calls, sums[kind]); diff != "" {
			t.Errorf("valid()'s %s by caller and in all, as the demo counts them (-) and as kdtrace does (+):\n%s", kind, diff)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// inlineScript counts the entries and returns of the fixture's
// functions, each in all and by the function the probe is in.
const inlineScript = `
pid$target:a.out:f:entry { @n["f", "entry"] = count(); @site["entry", probefunc] = count(); }
pid$target:a.out:f:return { @n["f", "return"] = count(); @site["return", probefunc] = count(); }
pid$target:a.out:p:entry { @n["p", "entry"] = count(); }
pid$target:a.out:p:return { @n["p", "return"] = count(); }
pid$target:a.out:g:entry { @n["g", "entry"] = count(); }
pid$target:a.out:g:return { @n["g", "return"] = count(); }
pid$target:a.out:m:entry { @n["m", "entry"] = count(); }
pid$target:a.out:m:return { @n["m", "return"] = count(); }
pid$target:libuinl.so:h:entry { @n["h", "entry"] = count(); }
pid$target:libuinl.so:h:return { @n["h", "return"] = count(); }
END { printa("probe %s %s %@d\n", @n); printa("site %s %s %@d\n", @site); }
`

// inlineFuncs are the fixture's functions in inlineScript's order.
var inlineFuncs = []string{"f", "p", "g", "m", "h"}

// TestInlineCompilers builds testdata/uinline's program and library
// with gcc and clang at -O2 and -O3, checks in their DWARF that f and
// h were inlined, and traces them under -c: every function's entry and
// return probes must fire exactly as many times as the program counts
// its calls, and f's probes in each caller as many times as that caller
// calls it.
func TestInlineCompilers(t *testing.T) {
	needTracing(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the rewrite decodes amd64")
	}
	bin := build(t, "kdtrace")
	src := filepath.Join("..", "..", "testdata", "uinline")
	script := filepath.Join(t.TempDir(), "inline.d")
	if err := os.WriteFile(script, []byte(inlineScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	builds := []struct {
		name, cc, level string
		flags           []string // more compiler flags, for the program
		strip           []string // strip's flags, the DWARF moved to a file named by .gnu_debuglink
	}{
		{"gcc-O2", "gcc", "-O2", nil, nil},
		{"gcc-O3", "gcc", "-O3", nil, nil},
		{"clang-O2", "clang", "-O2", nil, nil},
		{"clang-O3", "clang", "-O3", nil, nil},
		{"gcc-O2-nopie", "gcc", "-O2", []string{"-fno-pie", "-no-pie"}, nil},
		{"gcc-O2-dwarf4", "gcc", "-O2", []string{"-gdwarf-4"}, nil},
		{"clang-O3-dwarf4", "clang", "-O3", []string{"-gdwarf-4"}, nil},
		{"gcc-O2-debuglink", "gcc", "-O2", nil, []string{"--strip-debug"}},
		// Stripped as distributions ship them: the callers' symbols
		// are in the debug file only.
		{"clang-O2-stripped", "clang", "-O2", nil, []string{"--strip-unneeded"}},
		{"gcc-O3-stripped", "gcc", "-O3", nil, []string{"--strip-unneeded"}},
	}
	// Each gcc build adds the clones of g and parts of p it made; all
	// of them together must have made some of each.
	clones, parts, gccRan, gccBuilds := 0, 0, 0, 0
	for _, b := range builds {
		if b.cc == "gcc" {
			gccBuilds++
		}
	}
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			if _, err := exec.LookPath(b.cc); err != nil {
				t.Skipf("no %s: %v", b.cc, err)
			}
			dir := t.TempDir()
			prog, lib := buildInlineFixture(t, b.cc, b.level, b.flags, src, dir)
			if b.strip != nil {
				separateDebug(t, prog, b.strip)
				separateDebug(t, lib, b.strip)
			}
			c, p := checkInlined(t, prog, lib, cache)
			if b.cc == "gcc" {
				clones += c
				parts += p
				gccRan++
			}
			traceInlineFixture(t, bin, prog, script, cache)
		})
	}
	if gccRan == gccBuilds && (clones == 0 || parts == 0) {
		t.Errorf("gcc made %d clones of g and %d partial inlinings of p: the fixture no longer covers them", clones, parts)
	}
}

// separateDebug moves file's DWARF into file.debug, strips file with
// strip's flags and links the two by .gnu_debuglink, as distributions
// ship programs.
func separateDebug(t *testing.T, file string, flags []string) {
	t.Helper()
	for _, c := range [][]string{
		{"objcopy", "--only-keep-debug", file, file + ".debug"},
		append(append([]string{"strip"}, flags...), file),
		{"objcopy", "--add-gnu-debuglink=" + file + ".debug", file},
	} {
		if _, err := exec.LookPath(c[0]); err != nil {
			t.Skipf("no %s (binutils): %v", c[0], err)
		}
		cmd := exec.Command(c[0], c[1:]...)
		cmd.Dir = filepath.Dir(file)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", c, err, out)
		}
	}
}

// buildInlineFixture builds the library and the program linked to it,
// with -g and flags, position-independent unless flags say otherwise
// (Debian's default).
func buildInlineFixture(t *testing.T, cc, level string, flags []string, src, dir string) (prog, lib string) {
	t.Helper()
	lib = filepath.Join(dir, "libuinl.so")
	prog = filepath.Join(dir, "prog")
	for _, args := range [][]string{
		{level, "-g", "-shared", "-fPIC", "-o", lib, filepath.Join(src, "lib.c")},
		append([]string{level, "-g", "-o", prog, filepath.Join(src, "prog.c"), "-L" + dir, "-luinl", "-Wl,-rpath," + dir}, flags...),
	} {
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", cc, args, err, out)
		}
	}
	return prog, lib
}

// checkInlined fails the test unless the DWARF says that f and h have
// inline copies, so that the counts test the rewrite; it returns how
// many clones of g and parts of p the compiler made.
func checkInlined(t *testing.T, prog, lib, cache string) (clones, parts int) {
	t.Helper()
	for _, c := range []struct{ file, fn string }{{prog, "f"}, {lib, "h"}} {
		img, err := debuginfo.OpenImage(c.file, debuginfo.Options{CacheDir: cache})
		if err != nil {
			t.Fatal(err)
		}
		set := debuginfo.NewSet(img)
		defer set.Close()
		f, err := set.Lookup(c.fn)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Copies) == 0 {
			t.Fatalf("%s: %s has no inline copy", c.file, c.fn)
		}
		if c.fn == "f" {
			clones = len(set.Clones("g"))
			if _, _, err := set.Code(img.Module, "p.part.0"); err == nil {
				parts = 1
			}
		}
	}
	return clones, parts
}

// traceInlineFixture traces the program with inlineScript and compares
// the counts; it logs how many probes each function's entry and return
// became, with their hits, for the record.
func traceInlineFixture(t *testing.T, bin, prog, script, cache string) {
	t.Helper()
	env := append(os.Environ(), "XDG_CACHE_HOME="+cache)
	d := exec.Command(bin, "-e", "-d", "-c", prog, "-s", script)
	d.Env = env
	rewrite, err := d.CombinedOutput()
	if err != nil {
		t.Fatalf("kdtrace -e -d: %v\n%s", err, rewrite)
	}
	probes, guards := probesOf(string(rewrite))
	cmd := exec.Command(bin, "-q", "-c", prog, "-s", script)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kdtrace -c: %v\n%s%s", err, out, stderr.Bytes())
	}
	own := map[string]int{}      // the program's counts
	fired := map[string]int{}    // "f entry" and the others
	byCaller := map[string]int{} // "entry once"; clones' and cold parts' suffixes cut
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2:
			own[f[0]] = atoi(t, f[1])
		case len(f) == 4 && f[0] == "probe":
			fired[f[1]+" "+f[2]] = atoi(t, f[3])
		case len(f) == 4 && f[0] == "site":
			caller, _, _ := strings.Cut(f[2], ".")
			byCaller[f[1]+" "+caller] += atoi(t, f[3])
		}
	}
	for _, fn := range inlineFuncs {
		n, ok := own[fn]
		if !ok {
			t.Fatalf("the program did not print its count of %s:\n%s", fn, out)
		}
		if fired[fn+" entry"] != n || fired[fn+" return"] != n {
			t.Errorf("%s: %d entries and %d returns fired, the program counts %d calls", fn, fired[fn+" entry"], fired[fn+" return"], n)
		}
		t.Logf("%s: %d entry probes, %d return probes, %d calls", fn, probes[fn+" entry"], probes[fn+" return"], n)
	}
	t.Logf("%d inline copies guarded", guards)
	for name, n := range own {
		caller, ok := strings.CutPrefix(name, "f.")
		if !ok {
			continue
		}
		for _, kind := range []string{"entry", "return"} {
			if got := byCaller[kind+" "+caller]; got != n {
				t.Errorf("f's %s probes in %s fired %d times, %s calls f %d times", kind, caller, got, caller, n)
			}
		}
	}
	if t.Failed() {
		t.Logf("kdtrace -e -d:\n%s\nkdtrace -c:\n%s", rewrite, out)
	}
}

// probesOf counts the probe descriptions of the clauses kdtrace -d
// printed that count @n["fn", "kind"], by "fn kind", and the guards'
// flags the rewrite made.
func probesOf(d string) (probes map[string]int, guards int) {
	probes = map[string]int{}
	key := regexp.MustCompile(`@n\["(\w+)", "(\w+)"\]`)
	flags := map[string]bool{}
	for _, clause := range strings.Split(d, "\n}\n") {
		head, body, ok := strings.Cut(clause, "{\n")
		if !ok {
			continue
		}
		for _, f := range regexp.MustCompile(`self->%inl_\d+`).FindAllString(body, -1) {
			flags[f] = true
		}
		m := key.FindStringSubmatch(body)
		if m == nil {
			continue
		}
		n := 0
		for _, line := range strings.Split(head, "\n") {
			if strings.HasPrefix(line, "pid") {
				n++
			}
		}
		probes[m[1]+" "+m[2]] = n
	}
	return probes, len(flags)
}

// TestInlineAmbiguousCaller checks that an inline copy in one of two
// static functions of the same name is refused, naming both: the pid
// provider finds functions by name, and would put the probe in the
// other.
func TestInlineAmbiguousCaller(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the fixture is a Linux amd64 program")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("no gcc: %v", err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir := t.TempDir()
	files := map[string]string{
		"f.h": "static volatile long sink;\nstatic inline long f(long x) { sink++; if (x < 0) return 0; return x * 3; }\n",
		"a.c": "#include \"f.h\"\n__attribute__((noinline)) static long helper(long x) { return f(x) + 1; }\nlong one(long x) { return helper(x); }\n",
		"b.c": "#include \"f.h\"\n__attribute__((noinline)) static long helper(long x) { return f(x * 2) + 1; }\nlong one(long);\nint main(int argc, char **argv) { return one(argc) + helper(argc); }\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "amb")
	if out, err := exec.Command(gcc, "-O2", "-g", "-o", bin, filepath.Join(dir, "a.c"), filepath.Join(dir, "b.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	st := run([]string{"kdtrace", "-e", "-c", bin, "-n", "pid$target:a.out:f:entry { }"}, &stdout, &stderr)
	want := regexp.MustCompile(`^kdtrace: invalid probe specifier pid\$target:a.out:f:entry \{ \}: probe description pid\d+:a.out:f:entry does not match any probes: a probe of f is in helper, which the pid provider cannot name: 2 function symbols helper in \S+, at 0x[0-9a-f]+, 0x[0-9a-f]+\n$`)
	if st != 1 || !want.MatchString(stderr.String()) {
		t.Errorf("status %d, stderr %q; want 1 and %s", st, stderr.String(), want)
	}
}

// TestInlineNoDWARF checks that a program without DWARF keeps its pid
// descriptions as written: the pid provider makes them from the symbol
// table, the out-of-line copy's alone.
func TestInlineNoDWARF(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the fixture is a Linux amd64 program")
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skipf("no gcc: %v", err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	bin := filepath.Join(t.TempDir(), "demo")
	if out, err := exec.Command(gcc, "-O2", "-g0", "-o", bin, filepath.Join("..", "..", "examples", "inline", "demo.c")).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	for _, d := range []string{"pid$target:a.out:valid:entry", "pid$target:a.out:valid:return"} {
		var stdout, stderr bytes.Buffer
		if st := run([]string{"kdtrace", "-e", "-d", "-c", bin, "-n", d + " { }"}, &stdout, &stderr); st != 0 {
			t.Errorf("kdtrace -e -d -n '%s { }': status %d, stderr %q", d, st, stderr.String())
		}
		want := d + "\n{\n}\n\n"
		if got := pidNumber.ReplaceAllString(stdout.String(), "pid$$target:"); got != want {
			t.Errorf("kdtrace -e -d -n '%s { }' printed %q, want %q", d, got, want)
		}
	}
}
