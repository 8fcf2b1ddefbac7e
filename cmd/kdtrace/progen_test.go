package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/progen"
)

var (
	progenN       = flag.Int("progen.n", 24, "TestInlineGenerated: the number of generated programs")
	progenSeed    = flag.Uint64("progen.seed", 1, "TestInlineGenerated: the first program's seed")
	progenKdtrace = flag.String("progen.kdtrace", "", "TestInlineGenerated: trace with this kdtrace binary instead of one built from this tree")
	progenKeep    = flag.String("progen.keep", "", "TestInlineGenerated: copy the sources and binaries of programs with wrong cases into this directory")
)

// progenFlagSets are the optimization flags each generated program is
// built with, by each compiler.
var progenFlagSets = [][]string{
	{"-O1"},
	{"-O2"},
	{"-O3"},
	{"-O2", "-funroll-loops"},
	{"-O2", "-flto"},
}

// progenBuild is one compiler and flag set.
type progenBuild struct {
	cc    string
	flags []string
}

func (b progenBuild) String() string { return b.cc + " " + strings.Join(b.flags, " ") }

// progenVerdict is how kdtrace counted one inline function of one build.
type progenVerdict int

const (
	exact  progenVerdict = iota // entries and returns as the program counts its calls
	warned                      // not exact, but kdtrace warned about a copy of it
	wrong                       // neither
	// beyond: not exact, not warned, and no placement of instruction
	// probes could count the calls: no instruction of the code that
	// holds the function ran once per call (see instructionBound).
	// The compiler evaluated a loop of calls in closed form.
	beyond
)

// progenTally counts one build's verdicts over all programs.
type progenTally struct {
	verdicts [4]int
	// notInlined counts the functions that have no inline copy in
	// the build, which are not traced.
	notInlined int
	// failed counts the kdtrace runs that failed, all of whose cases
	// are wrong.
	failed int
	// entries and returns count the wrong cases of runs that did not
	// fail whose entries differ from the calls, and whose returns
	// differ from the entries.
	entries, returns int
	// wrongs lists the wrong cases, one line each.
	wrongs []string
}

// TestInlineGenerated traces the inline functions of programs that
// internal/progen generates, built by gcc and clang with each of
// progenFlagSets, with DWARF 5 for even seeds and DWARF 4 for odd ones.
// Each function that the build's DWARF says has inline copies is a
// case: exact when its pid entry and return probes both fire as many
// times as the program counts its calls, warned when they do not but
// kdtrace warned about an inline copy of it, wrong otherwise, or when
// kdtrace failed. Any wrong case fails the test; the figures of every
// compiler and flag set are logged. -progen.n and -progen.seed choose
// the programs (3 under -short), -progen.kdtrace the kdtrace to test and
// -progen.keep where to keep the programs with wrong cases; see
// bench/progen.sh for larger runs.
func TestInlineGenerated(t *testing.T) {
	needTracing(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the rewrite decodes amd64")
	}
	n := *progenN
	if testing.Short() {
		n = min(n, 3)
	}
	bin := *progenKdtrace
	if bin == "" {
		bin = build(t, "kdtrace")
	}
	if *progenKeep != "" {
		if err := os.MkdirAll(*progenKeep, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	builds := progenBuilds(t)
	if len(builds) == 0 {
		t.Skip("no compiler builds a program")
	}
	var mu sync.Mutex
	tallies := map[string]*progenTally{}
	for _, b := range builds {
		tallies[b.String()] = &progenTally{}
	}
	start := time.Now()
	t.Run("builds", func(t *testing.T) {
		for seed := *progenSeed; seed < *progenSeed+uint64(n); seed++ {
			p := progen.Generate(seed)
			for _, b := range builds {
				t.Run(fmt.Sprintf("%d/%s%s", seed, b.cc, strings.Join(b.flags, "")), func(t *testing.T) {
					t.Parallel()
					cases, failed := traceGenerated(t, bin, p, b)
					mu.Lock()
					defer mu.Unlock()
					tl := tallies[b.String()]
					if failed {
						tl.failed++
					}
					for _, c := range cases {
						if !c.inlined {
							tl.notInlined++
							continue
						}
						tl.verdicts[c.verdict]++
						if c.verdict == wrong && !failed {
							if c.entries != c.calls {
								tl.entries++
							}
							if c.returns != c.entries {
								tl.returns++
							}
						}
						if c.verdict == wrong {
							tl.wrongs = append(tl.wrongs, fmt.Sprintf("seed %d, %s: %s", seed, b, c))
						}
					}
				})
			}
		}
	})
	var table strings.Builder
	fmt.Fprintf(&table, "%d programs from seed %d, in %v:\n", n, *progenSeed, time.Since(start).Round(time.Second))
	// Of the wrong cases, entries off and returns off count those whose
	// entries differ from the calls and those whose returns differ
	// from the entries, in runs that did not fail.
	// Beyond counts the cases no instruction probe could count.
	fmt.Fprintf(&table, "%-26s %6s %6s %6s %6s %11s %11s %12s %12s\n", "build", "exact", "warned", "wrong", "beyond", "entries off", "returns off", "runs failed", "not inlined")
	var wrongs []string
	for _, b := range builds {
		tl := tallies[b.String()]
		fmt.Fprintf(&table, "%-26s %6d %6d %6d %6d %11d %11d %12d %12d\n", b, tl.verdicts[exact], tl.verdicts[warned], tl.verdicts[wrong], tl.verdicts[beyond], tl.entries, tl.returns, tl.failed, tl.notInlined)
		wrongs = append(wrongs, tl.wrongs...)
	}
	sort.Strings(wrongs)
	t.Logf("%s", table.String())
	if len(wrongs) > 0 {
		t.Errorf("%d wrong cases:\n%s", len(wrongs), strings.Join(wrongs, "\n"))
	}
}

// progenBuilds returns the compilers and flag sets that build a trivial
// program, logging why each other one is left out (clang's -flto, for
// one, needs a linker plugin).
func progenBuilds(t *testing.T) []progenBuild {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "empty.c")
	if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var builds []progenBuild
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := exec.LookPath(cc); err != nil {
			t.Logf("leaving out %s: %v", cc, err)
			continue
		}
		for _, flags := range progenFlagSets {
			b := progenBuild{cc, flags}
			args := append(append([]string{"-g"}, flags...), "-o", filepath.Join(dir, "empty"), src)
			if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
				t.Logf("leaving out %s: it does not build an empty program: %v\n%s", b, err, out)
				continue
			}
			builds = append(builds, b)
		}
	}
	return builds
}

// progenCase is one inline function of one build of a program.
type progenCase struct {
	fn      progen.Func
	inlined bool // the build's DWARF has inline copies of fn
	calls   uint64
	entries uint64
	returns uint64
	verdict progenVerdict
	why     string // for a wrong case: what kdtrace did
}

func (c progenCase) String() string {
	var kind []string
	if c.fn.Always {
		kind = append(kind, "always_inline")
	}
	if c.fn.Pointer {
		kind = append(kind, "through a pointer too")
	}
	if len(c.fn.Calls) > 0 {
		kind = append(kind, "calls "+strings.Join(c.fn.Calls, ", "))
	}
	s := c.fn.Name
	if len(kind) > 0 {
		s += " (" + strings.Join(kind, "; ") + ")"
	}
	if c.why != "" {
		return s + ": " + c.why
	}
	return fmt.Sprintf("%s: %d entries, %d returns, %d calls", s, c.entries, c.returns, c.calls)
}

// progenFired is a line of the counts progenScript prints.
var progenFired = regexp.MustCompile(`^kdtrace (entry|return) (\w+) (\d+)$`)

// progenScript counts the entries and returns of fns.
func progenScript(fns []string) string {
	var s strings.Builder
	for _, fn := range fns {
		fmt.Fprintf(&s, "pid$target:a.out:%s:entry { @e[%q] = count(); }\n", fn, fn)
		fmt.Fprintf(&s, "pid$target:a.out:%s:return { @r[%q] = count(); }\n", fn, fn)
	}
	s.WriteString("END { printa(\"kdtrace entry %s %@d\\n\", @e); printa(\"kdtrace return %s %@d\\n\", @r); }\n")
	return s.String()
}

// traceGenerated builds p as b says, finds which of its inline
// functions have inline copies, traces those in one kdtrace run and
// returns a case for each inline function, and whether kdtrace failed.
// It reports each wrong case as an error, with the rewrite of the
// function's probes.
func traceGenerated(t *testing.T, bin string, p *progen.Program, b progenBuild) (cases []progenCase, failed bool) {
	t.Helper()
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	src := filepath.Join(dir, "prog.c")
	prog := filepath.Join(dir, "prog")
	if err := os.WriteFile(src, []byte(p.Source), 0o644); err != nil {
		t.Fatal(err)
	}
	dwarf := "-gdwarf-5"
	if p.Seed%2 == 1 {
		dwarf = "-gdwarf-4"
	}
	args := append(append([]string{"-g", dwarf}, b.flags...), "-o", prog, src)
	if out, err := exec.Command(b.cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", b.cc, strings.Join(args, " "), err, out)
	}
	cases = make([]progenCase, len(p.Funcs))
	var traced []string
	holders := map[string][]string{} // the functions holding each one's code
	img, err := debuginfo.OpenImage(prog, debuginfo.Options{CacheDir: filepath.Join(cache, "kdtrace"), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	set := debuginfo.NewSet(img)
	defer set.Close()
	for i, fn := range p.Funcs {
		cases[i].fn = fn
		f, err := set.Lookup(fn.Name)
		var unknown *debuginfo.UnknownFunctionError
		if err != nil && !errors.As(err, &unknown) {
			t.Fatal(err)
		}
		if len(f.Copies) > 0 {
			cases[i].inlined = true
			traced = append(traced, fn.Name)
			var callers, bodies []string
			for _, c := range f.Copies {
				if c.Caller != "" {
					callers = append(callers, c.Caller)
				}
			}
			for _, s := range f.OutOfLine {
				bodies = append(bodies, s.Name)
			}
			for _, c := range set.Clones(fn.Name) {
				bodies = append(bodies, c.Name)
			}
			holders[fn.Name] = holdersOf(callers, bodies)
		}
	}
	if len(traced) == 0 {
		return cases, false
	}
	script := filepath.Join(dir, "count.d")
	if err := os.WriteFile(script, []byte(progenScript(traced)), 0o644); err != nil {
		t.Fatal(err)
	}
	command := strings.Join(append([]string{prog}, p.Args...), " ")
	stdout, stderr, runErr := runKdtrace(bin, cache, "-q", "-c", command, "-s", script)
	calls, err := progen.Counts(stdout)
	if err != nil {
		t.Fatal(err)
	}
	fired := map[string]uint64{}
	for _, line := range strings.Split(string(stdout), "\n") {
		if m := progenFired.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseUint(m[3], 10, 64)
			fired[m[1]+" "+m[2]] = n
		}
	}
	var wrongs []*progenCase
	for i := range cases {
		c := &cases[i]
		if !c.inlined {
			continue
		}
		name := c.fn.Name
		n, counted := calls[name]
		c.calls, c.entries, c.returns = n, fired["entry "+name], fired["return "+name]
		switch {
		case runErr != nil:
			c.verdict, c.why = wrong, fmt.Sprintf("kdtrace failed: %v: %s", runErr, bytes.TrimSpace(stderr))
		case !counted:
			c.verdict, c.why = wrong, "the program printed no count"
		case c.entries == n && c.returns == n:
			c.verdict = exact
		case warnedAbout(stderr, name):
			c.verdict = warned
		default:
			c.verdict = wrong
			bound, err := instructionBound(bin, cache, command, holders[name])
			if err != nil {
				t.Errorf("seed %d, %s: tracing every instruction of %v: %v", p.Seed, b, holders[name], err)
			} else if uint64(bound) < n {
				c.verdict, c.why = beyond, fmt.Sprintf("%d entries, %d returns, %d calls; no instruction ran once per call (at most %d times)", c.entries, c.returns, n, bound)
			}
		}
		if c.verdict == wrong {
			wrongs = append(wrongs, c)
		}
	}
	if len(wrongs) == 0 {
		return cases, false
	}
	// The rewrite of the whole script, once, each clause shown with
	// the function it counts.
	rewrite, errs, err := runKdtrace(bin, cache, "-e", "-d", "-c", command, "-s", script)
	for _, c := range wrongs {
		d := clausesOf(string(rewrite), c.fn.Name)
		if err != nil {
			d = fmt.Sprintf("kdtrace -e -d: %v\n%s", err, errs)
		}
		t.Errorf("seed %d, %s %s: %s\nkdtrace's stderr:\n%s\nkdtrace -e -d:\n%s", p.Seed, b, dwarf, c, stderr, d)
	}
	if *progenKeep != "" {
		keep := filepath.Join(*progenKeep, fmt.Sprintf("%d-%s%s", p.Seed, b.cc, strings.Join(b.flags, "")))
		if err := os.MkdirAll(keep, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{src, prog} {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(keep, filepath.Base(f)), data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("kept in %s; run it as %s %s", keep, filepath.Join(keep, "prog"), strings.Join(p.Args, " "))
	}
	return cases, runErr != nil
}

// clausesOf returns the clauses of kdtrace -d's output that count fn's
// probes, with those that set the variables their predicates test (the
// rewrite's guards), in the output's order.
func clausesOf(d, fn string) string {
	clauses := strings.SplitAfter(d, "\n}\n")
	in := make([]bool, len(clauses))
	vars := map[string]bool{}
	for more := true; more; {
		more = false
		for i, clause := range clauses {
			if in[i] {
				continue
			}
			ids := rewriteVar.FindAllString(clause, -1)
			mine := strings.Contains(clause, "[\""+fn+"\"]")
			for _, id := range ids {
				mine = mine || vars[id]
			}
			if !mine {
				continue
			}
			in[i], more = true, true
			for _, id := range ids {
				vars[id] = true
			}
		}
	}
	var s strings.Builder
	for i, clause := range clauses {
		if in[i] {
			s.WriteString(strings.TrimLeft(clause, "\n"))
			s.WriteString("\n")
		}
	}
	return s.String()
}

// rewriteVar is a variable the rewrite made, which no script can name.
var rewriteVar = regexp.MustCompile(`%\w+`)

// warnedAbout reports whether kdtrace's stderr has a warning about an
// inline copy of fn.
func warnedAbout(stderr []byte, fn string) bool {
	for _, line := range strings.Split(string(stderr), "\n") {
		if strings.Contains(line, "warning:") && strings.Contains(line, "inline copy of "+fn+" ") {
			return true
		}
	}
	return false
}

// runKdtrace runs bin with args and the index cache in cache, and
// returns its output; it kills it, by its own PID, after two minutes.
func runKdtrace(bin, cache string, args ...string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err = cmd.Run()
	return out.Bytes(), errs.Bytes(), err
}

func TestWarnedAbout(t *testing.T) {
	stderr := []byte("kdtrace: warning: inline copy of f10 at 0x1234 in prog left out: no function symbol holds it\n" +
		"kdtrace: no inline copy of f2 can be probed\n")
	for _, c := range []struct {
		fn   string
		want bool
	}{
		{"f10", true},
		{"f1", false}, // f10's warning is not f1's
		{"f2", false}, // an error, not a warning
	} {
		if got := warnedAbout(stderr, c.fn); got != c.want {
			t.Errorf("warnedAbout(%s) = %v, want %v", c.fn, got, c.want)
		}
	}
}

func TestClausesOf(t *testing.T) {
	d := `pid1:a.out:c1:6c
{
	((self->%inl_1) = 0x1);
}

pid1:a.out:f0:entry,
pid1:a.out:c1:60
{
	((@e["f0"]) = count());
}

pid1:a.out:c1:f7
{
	((this->%ok_1) = ((this->%ok_1) || (self->%inl_1)));
}

pid1:a.out:f0:return,
pid1:a.out:c1:f7
/(this->%ok_1)/
{
	((@r["f0"]) = count());
}

pid1:a.out:f1:entry
{
	((@e["f1"]) = count());
}
`
	want := `pid1:a.out:f1:entry
{
	((@e["f1"]) = count());
}

`
	if diff := cmp.Diff(want, clausesOf(d, "f1")); diff != "" {
		t.Errorf("clausesOf(f1) (-want +got):\n%s", diff)
	}
	got := clausesOf(d, "f0")
	for _, s := range []string{"c1:6c", "c1:60", "%ok_1) || ", `@r["f0"]`} {
		if !strings.Contains(got, s) {
			t.Errorf("clausesOf(f0) has no %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "f1") {
		t.Errorf("clausesOf(f0) has f1's clause:\n%s", got)
	}
}
