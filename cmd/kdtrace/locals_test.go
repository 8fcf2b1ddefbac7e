package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// localsFixture marks four places of work with global labels (after
// the entry's prologue, in a loop, inside the inlined copy of scale,
// before the return) and prints, after each, the variables in scope
// there, one line each: "mark name=value". kdtrace's locals-> at the
// same places must print the same lines.
const localsFixture = `#include <stdio.h>
#include <stdlib.h>

struct req {
	int len;
	long id;
	char *name;
};

static inline __attribute__((always_inline)) long scale(struct req *r, long k)
{
	long v = r->len * k;
	__asm__ volatile(".globl mark_inline\nmark_inline:" : : "r"(v));
	printf("inline v=%ld\ninline k=%ld\ninline r->len=%d\n", v, k, r->len);
	return v + r->id;
}

__attribute__((noinline)) long work(struct req *r, int n)
{
	static int calls;
	long sum = 0;
	calls++;
	__asm__ volatile(".globl mark_entry\nmark_entry:" : : "r"(r), "r"(n));
	printf("entry n=%d\nentry r=%p\nentry r->len=%d\nentry r->id=%ld\nentry r->name=%s\nentry sum=%ld\nentry calls=%d\n",
		n, (void *)r, r->len, r->id, r->name, sum, calls);
	for (int i = 0; i < n; i++) {
		int sq = i * i;
		__asm__ volatile(".globl mark_loop\nmark_loop:" : : "r"(sq), "r"(sum));
		printf("loop i=%d\nloop sq=%d\nloop sum=%ld\nloop n=%d\n", i, sq, sum, n);
		sum += sq + r->len;
	}
	sum += scale(r, n);
	__asm__ volatile(".globl mark_return\nmark_return:" : : "r"(sum));
	printf("return sum=%ld\nreturn n=%d\n", sum, n);
	return sum;
}

int main(int argc, char **argv)
{
	struct req q = { argc + 2, 7, argv[0] };
	char *out = getenv("LOCALS_OUT");
	if (out != NULL && freopen(out, "w", stdout) == NULL)
		return 1;
	printf("result %ld\n", work(&q, argc + 3));
	return 0;
}
`

// localsVar is a variable the fixture prints at a mark: its name after
// locals->, and the printf conversion of both.
type localsVar struct {
	mark, expr, conv string
}

var localsVars = []localsVar{
	{"entry", "n", "%d"}, {"entry", "r", "%p"}, {"entry", "r->len", "%d"}, {"entry", "r->id", "%d"},
	{"entry", "r->name", "%s"}, {"entry", "sum", "%d"}, {"entry", "calls", "%d"},
	{"loop", "i", "%d"}, {"loop", "sq", "%d"}, {"loop", "sum", "%d"}, {"loop", "n", "%d"},
	{"inline", "v", "%d"}, {"inline", "k", "%d"}, {"inline", "r->len", "%d"},
	{"return", "sum", "%d"}, {"return", "n", "%d"},
}

// TestLocalsUser builds the fixture with gcc and clang, at -O0, -O2 and
// -O3, with DWARF 4 and 5, and at each mark reads with locals-> every
// variable the program prints there: each that compiles must print
// what the program prints in the same run, at every firing. Each variable gdb reads at
// the mark (its value is not <optimized out>) must be one kdtrace
// reads, unless kdtrace says it needs the call frame information it
// does not read yet. The counts are logged.
func TestLocalsUser(t *testing.T) {
	needTracing(t)
	gdb, _ := exec.LookPath("gdb")
	type config struct{ cc, opt, dwarf string }
	var configs []config
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := exec.LookPath(cc); err != nil {
			t.Logf("no %s", cc)
			continue
		}
		for _, opt := range []string{"-O0", "-O2", "-O3"} {
			for _, dw := range []string{"-gdwarf-4", "-gdwarf-5"} {
				configs = append(configs, config{cc, opt, dw})
			}
		}
	}
	if len(configs) == 0 {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "locals.c")
	if err := os.WriteFile(src, []byte(localsFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	var table []string
	for _, c := range configs {
		name := fmt.Sprintf("%s%s%s", c.cc, c.opt, c.dwarf)
		t.Run(name, func(t *testing.T) {
			bin := filepath.Join(dir, name)
			if out, err := exec.Command(c.cc, c.opt, c.dwarf, "-fcf-protection=none", "-o", bin, src).CombinedOutput(); err != nil {
				t.Skipf("%s: %v\n%s", c.cc, err, out)
			}
			marks := localsMarks(t, bin)
			// One clause a line: a variable kdtrace refuses is named by
			// the line of the error, and left out.
			var clauses []string
			for _, v := range localsVars {
				arg, conv := "locals->"+v.expr, v.conv
				switch conv {
				case "%s":
					arg = "stringof(" + arg + ")"
				case "%p":
					conv = "0x%p" // glibc's %p has the 0x dtrace's lacks
				}
				clauses = append(clauses, fmt.Sprintf("pid$target:a.out:work:%x { printf(\"%s %s=%s\\n\", %s); }", marks[v.mark], v.mark, v.expr, conv, arg))
			}
			script := filepath.Join(dir, name+".d")
			read := slices.Clone(localsVars)
			refused := regexp.MustCompile(`: line (\d+): `)
			for {
				var lines []string
				for _, v := range read {
					lines = append(lines, clauses[slices.Index(localsVars, v)])
				}
				if err := os.WriteFile(script, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				var stdout, stderr bytes.Buffer
				if run([]string{"kdtrace", "-e", "-c", bin, "-s", script}, &stdout, &stderr) == 0 {
					break
				}
				m := refused.FindStringSubmatch(stderr.String())
				if m == nil || len(read) == 0 {
					t.Fatalf("kdtrace -e: %s", stderr.String())
				}
				var line int
				fmt.Sscan(m[1], &line)
				v := read[line-1]
				t.Logf("%s %s: %s", v.mark, v.expr, strings.TrimSpace(stderr.String()))
				read = slices.Delete(read, line-1, line)
			}
			if len(read) == 0 {
				t.Logf("kdtrace reads none of the variables")
			}
			progOut := filepath.Join(dir, name+".out")
			t.Setenv("LOCALS_OUT", progOut)
			var stdout, stderr bytes.Buffer
			if st := run([]string{"kdtrace", "-q", "-c", bin, "-s", script}, &stdout, &stderr); st != 0 {
				t.Fatalf("status %d: %s", st, stderr.String())
			}
			want, err := os.ReadFile(progOut)
			if err != nil {
				t.Fatal(err)
			}
			// The program's lines of the variables kdtrace read, in
			// order, are kdtrace's lines.
			keep := map[string]bool{}
			for _, v := range read {
				keep[v.mark+" "+v.expr] = true
			}
			checkPrinted(t, stdout.String(), want, keep)
			row := fmt.Sprintf("| %s %s %s | %d/%d |", c.cc, c.opt, c.dwarf, len(read), len(localsVars))
			if gdb != "" {
				byGDB := gdbReads(t, gdb, bin, marks)
				missed := 0
				for k := range byGDB {
					if !keep[k] {
						t.Errorf("gdb reads %s, kdtrace does not", k)
						missed++
					}
				}
				row += fmt.Sprintf(" %d | %d |", len(byGDB), len(byGDB)-missed)
			}
			table = append(table, row)
		})
	}
	t.Logf("fixture | kdtrace reads/printed | gdb reads | gdb's that kdtrace reads\n%s", strings.Join(table, "\n"))
}

// localsMarks returns the offsets of the fixture's marks in work.
func localsMarks(t *testing.T, bin string) map[string]uint64 {
	t.Helper()
	marks := map[string]uint64{}
	for _, m := range []string{"entry", "loop", "inline", "return"} {
		marks[m] = markOffset(t, bin, "work", "mark_"+m)
	}
	return marks
}

// checkPrinted checks that the lines kdtrace printed are those of the
// program's output, want, whose "key=value" lines have a key in keep,
// in their order.
func checkPrinted(t *testing.T, printed string, want []byte, keep map[string]bool) {
	t.Helper()
	var wantLines []string
	for _, l := range strings.Split(string(want), "\n") {
		if k, _, ok := strings.Cut(l, "="); ok && keep[k] {
			wantLines = append(wantLines, l)
		}
	}
	gotLines := strings.Split(strings.TrimRight(printed, "\n"), "\n")
	if !slices.Equal(gotLines, wantLines) {
		t.Errorf("kdtrace printed\n%s\nthe program printed\n%s", strings.Join(gotLines, "\n"), strings.Join(wantLines, "\n"))
	}
}

// gdbReads runs the fixture under gdb, stopping at each mark once, and
// returns the fixture's variables ("mark expr") gdb prints a value of.
func gdbReads(t *testing.T, gdb, bin string, marks map[string]uint64) map[string]bool {
	t.Helper()
	args := []string{"-batch", "-nx", "-ex", "set breakpoint pending on", "-ex", "starti"}
	order := []string{"entry", "loop", "inline", "return"}
	for _, m := range order {
		args = append(args, "-ex", fmt.Sprintf("tbreak *(work+%d)", marks[m]))
	}
	for _, m := range order {
		args = append(args, "-ex", "continue", "-ex", "echo MARK "+m+"\\n")
		for _, v := range localsVars {
			if v.mark == m {
				args = append(args, "-ex", fmt.Sprintf("echo VAR %s\\n", v.expr), "-ex", "print "+v.expr)
			}
		}
	}
	args = append(args, "-ex", "kill", bin)
	out, _ := exec.Command(gdb, args...).CombinedOutput()
	reads := map[string]bool{}
	mark, expr := "", ""
	value := regexp.MustCompile(`^\$\d+ = `)
	for _, l := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(l, "MARK "):
			mark = strings.TrimPrefix(l, "MARK ")
		case strings.HasPrefix(l, "VAR "):
			expr = strings.TrimPrefix(l, "VAR ")
		case value.MatchString(l) && mark != "" && expr != "":
			if !strings.Contains(l, "<optimized out>") {
				reads[mark+" "+expr] = true
			}
			expr = ""
		}
	}
	return reads
}
