// Package gdbcmp measures kdtrace's locals-> against gdb: it runs a
// program under gdb, stopping once at each of a set of instructions,
// reads with gdb the variables in scope there, then runs kdtrace on the
// same program with a pid offset probe at each instruction reading the
// same variables with locals->, and compares the values, first
// execution with first execution. The address space is not randomised
// in either run (gdb's default; the caller runs kdtrace so), so that
// pointers compare too.
//
// A program is given by its command line and its functions, which may
// come from any source (a fixture, a generator); Lines gives the
// instructions the line table names in them.
package gdbcmp

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed gdb.py
var reader string

// Stop is an instruction: Offset bytes into function Func.
type Stop struct {
	Func   string
	Offset uint64
}

func (s Stop) String() string { return fmt.Sprintf("%s+%#x", s.Func, s.Offset) }

// Var is a scalar variable, or a scalar member of one, that gdb reads
// at a stop.
type Var struct {
	Name  string // as locals-> reads it: "n", "g.c"
	Size  int64
	Value uint64 // its Size bytes
	// Param says it is a parameter of the stop's function itself (not
	// of an inlined copy), or a member of one.
	Param bool
}

// Frame is what gdb reads at a stop.
type Frame struct {
	Stop Stop
	Hit  bool  // the program got there
	Vars []Var // the values gdb reads
	// OptimizedOut are the names gdb says <optimized out>; Skipped
	// those of types the values are not compared for (floats, arrays),
	// Errors those gdb could not read, with its message, and Unstable
	// those whose value is not the same in two runs.
	OptimizedOut, Skipped, Errors, Unstable []string
	// Prologue is where gdb's `break Func` stops: past the prologue.
	Prologue uint64
}

// GDB runs argv (the program's path first) under the gdb at path, with
// environment env, stopping at each stop's first execution, and returns
// what gdb reads at each. It runs the program twice: a value that
// differs between the runs (an uninitialised variable's, which may hold
// a pointer mangled with the process's random guard) is indeterminate,
// and is listed in Unstable, not in Vars.
func GDB(path string, argv, env []string, stops []Stop) ([]Frame, error) {
	frames, err := gdbRun(path, argv, env, stops)
	if err != nil {
		return nil, err
	}
	again, err := gdbRun(path, argv, env, stops)
	if err != nil {
		return nil, err
	}
	for i := range frames {
		f := &frames[i]
		other := map[string]uint64{}
		for _, v := range again[i].Vars {
			other[v.Name] = v.Value
		}
		vars := f.Vars[:0]
		for _, v := range f.Vars {
			if w, ok := other[v.Name]; ok && w == v.Value {
				vars = append(vars, v)
			} else {
				f.Unstable = append(f.Unstable, v.Name)
			}
		}
		f.Vars = vars
	}
	return frames, nil
}

// gdbRun runs the program under gdb once.
func gdbRun(path string, argv, env []string, stops []Stop) ([]Frame, error) {
	dir, err := os.MkdirTemp("", "gdbcmp")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "reader.py")
	if err := os.WriteFile(script, []byte(reader), 0o600); err != nil {
		return nil, err
	}
	js := make([][2]any, len(stops))
	for i, s := range stops {
		js[i] = [2]any{s.Func, s.Offset}
	}
	b, err := json.Marshal(js)
	if err != nil {
		return nil, err
	}
	args := []string{"-batch", "-nx", "-ex", "set startup-with-shell off",
		"-ex", "unset environment LINES", "-ex", "unset environment COLUMNS",
		"-ex", "unset environment GDBCMP_STOPS", "-ex", "unset environment GDBCMP_OUT",
		"-x", script, "--args"}
	cmd := exec.Command(path, append(args, argv...)...)
	result := filepath.Join(dir, "out")
	cmd.Env = append(append([]string(nil), env...), "GDBCMP_STOPS="+string(b), "GDBCMP_OUT="+result)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gdb: %v\n%s", err, msg)
	}
	out, err := os.ReadFile(result)
	if err != nil {
		return nil, fmt.Errorf("gdb wrote no values: %v", err)
	}
	frames := make([]Frame, len(stops))
	for i, s := range stops {
		frames[i].Stop = s
	}
	var cur *Frame
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || !strings.HasPrefix(f[0], "@@") {
			continue
		}
		switch f[0] {
		case "@@STOP", "@@PROLOGUE":
			i, err := strconv.Atoi(f[1])
			if err != nil || i < 0 || i >= len(frames) {
				return nil, fmt.Errorf("gdb: bad line %q", l)
			}
			if f[0] == "@@STOP" {
				cur = &frames[i]
				cur.Hit = true
			} else if len(f) == 3 {
				frames[i].Prologue, _ = strconv.ParseUint(f[2], 16, 64)
			}
		case "@@VAR":
			if cur == nil || len(f) != 5 {
				return nil, fmt.Errorf("gdb: bad line %q", l)
			}
			size, err1 := strconv.ParseInt(f[2], 10, 64)
			v, err2 := strconv.ParseUint(f[3], 16, 64)
			if err1 != nil || err2 != nil {
				// Wider than 64 bits (__int128): not compared.
				cur.Skipped = append(cur.Skipped, f[1])
				continue
			}
			cur.Vars = append(cur.Vars, Var{f[1], size, v, f[4] == "1"})
		case "@@OPT":
			if cur != nil {
				cur.OptimizedOut = append(cur.OptimizedOut, f[1])
			}
		case "@@SKIP":
			if cur != nil {
				cur.Skipped = append(cur.Skipped, f[1])
			}
		case "@@ERR":
			if cur != nil {
				cur.Errors = append(cur.Errors, f[1]+": "+strings.Join(f[2:], " "))
			}
		}
	}
	return frames, nil
}

// Lines returns the instructions the line table of the program at bin
// names in each of funcs, and each function's first, as gdb reads them.
func Lines(path, bin string, funcs []string) ([]Stop, error) {
	const list = `import gdb, os
for fn in os.environ["GDBCMP_FUNCS"].split():
    sym = gdb.lookup_global_symbol(fn) or gdb.lookup_static_symbol(fn)
    if sym is None:
        print("@@NOFUNC %s" % fn)
        continue
    blk = gdb.block_for_pc(int(sym.value().address))
    lo, hi = blk.function and (blk.start, blk.end) or (0, 0)
    while blk is not None and blk.function is None:
        blk = blk.superblock
    if blk is not None:
        lo, hi = blk.start, blk.end
    pcs = {lo}
    for e in sym.symtab.linetable():
        if lo <= e.pc < hi:
            pcs.add(e.pc)
    for pc in sorted(pcs):
        print("@@LINE %s %x" % (fn, pc - lo))
`
	dir, err := os.MkdirTemp("", "gdbcmp")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "lines.py")
	if err := os.WriteFile(script, []byte(list), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(path, "-batch", "-nx", "-x", script, bin)
	cmd.Env = append(os.Environ(), "GDBCMP_FUNCS="+strings.Join(funcs, " "))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("gdb: %v\n%s", err, out)
	}
	var stops []Stop
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "@@NOFUNC":
			return nil, fmt.Errorf("gdb finds no function %s in %s", f[1], bin)
		case len(f) == 3 && f[0] == "@@LINE":
			off, err := strconv.ParseUint(f[2], 16, 64)
			if err != nil {
				return nil, fmt.Errorf("gdb: bad line %q", l)
			}
			stops = append(stops, Stop{f[1], off})
		}
	}
	return stops, nil
}

// Runner runs kdtrace with args and returns its standard output and
// error and its exit status. Compare runs the program with -c, and
// only compiles with -e; the runner must run the program as gdb does,
// with its address space not randomised and the same environment.
type Runner func(args ...string) (stdout, stderr string, status int)

// Figures count gdb's variables (those it reads a value of) by what
// kdtrace makes of them.
type Figures struct {
	Read    int // gdb reads a value
	Equal   int // kdtrace reads the same value
	Differ  int // kdtrace reads another value
	Missing int // kdtrace refuses it, or its probe did not print it
	// Prologue counts gdb's values of parameters before the prologue's
	// end, which are its frame slots' garbage: they are compared with
	// gdb's values past the prologue instead.
	Prologue int
}

// Add adds g's counts to f's.
func (f *Figures) Add(g Figures) {
	f.Read += g.Read
	f.Equal += g.Equal
	f.Differ += g.Differ
	f.Missing += g.Missing
	f.Prologue += g.Prologue
}

// Result is a comparison's outcome.
type Result struct {
	Figures
	// Differ and Missing say, one line each, which variables differ
	// ("work+0x4 n: gdb 0x5, kdtrace 0x7") and which kdtrace does not
	// read (with its reason).
	Differ, Missing []string
}

var refusedLine = regexp.MustCompile(`: line (\d+): (.*)`)

// Compare reads with kdtrace, run by run, the variables gdb read in
// frames, running argv (as one -c command line: no argument may hold
// white space), and compares. gdb reads a function's parameters before
// its prologue ends in the frame slots DWARF names, which the prologue
// has not yet written: there they are compared with what gdb reads at
// the stop past the prologue, when one of frames is that (the same
// call's, as each stop is the first execution), and left out when none
// is.
func Compare(run Runner, argv []string, frames []Frame) (*Result, error) {
	type item struct {
		stop Stop
		v    Var
	}
	// gdb's values past the prologue, by function.
	after := map[string]*Frame{}
	for i := range frames {
		f := &frames[i]
		if f.Hit && f.Prologue != 0 && f.Stop.Offset == f.Prologue {
			after[f.Stop.Func] = f
		}
	}
	res := &Result{}
	var items []item
	for _, f := range frames {
		if !f.Hit {
			continue
		}
		for _, v := range f.Vars {
			if f.Stop.Offset < f.Prologue && v.Param {
				res.Prologue++
				a, ok := after[f.Stop.Func]
				if !ok {
					continue
				}
				found := false
				for _, w := range a.Vars {
					if w.Name == v.Name {
						v, found = w, true
					}
				}
				if !found {
					continue
				}
			}
			items = append(items, item{f.Stop, v})
		}
	}
	res.Read = len(items)
	clause := func(i int, it item) string {
		return fmt.Sprintf("pid$target:a.out:%s:%x /!gdbcmp%d/ { gdbcmp%d = 1; printf(\"@@ %d %%x\\n\", (uint64_t)locals->%s); }",
			it.stop.Func, it.stop.Offset, i, i, i, it.v.Name)
	}
	dir, err := os.MkdirTemp("", "gdbcmp")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "locals.d")
	cmdline := strings.Join(argv, " ")
	// kdtrace stops at the first clause it refuses: it is left out,
	// and the rest compiled again.
	keep := make([]int, len(items))
	for i := range keep {
		keep[i] = i
	}
	refused := map[int]string{}
	for len(keep) > 0 {
		var lines []string
		for _, i := range keep {
			lines = append(lines, clause(i, items[i]))
		}
		if err := os.WriteFile(script, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			return nil, err
		}
		_, stderr, status := run("-e", "-s", script, "-c", cmdline)
		if status == 0 {
			break
		}
		m := refusedLine.FindStringSubmatch(stderr)
		n := 0
		if m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		if n < 1 || n > len(keep) {
			return nil, fmt.Errorf("kdtrace -e: %s", stderr)
		}
		refused[keep[n-1]] = strings.TrimSpace(m[2])
		keep = append(keep[:n-1], keep[n:]...)
	}
	got := map[int]uint64{}
	if len(keep) > 0 {
		stdout, stderr, status := run("-q", "-s", script, "-c", cmdline)
		if status != 0 {
			return nil, fmt.Errorf("kdtrace: status %d: %s", status, stderr)
		}
		for _, l := range strings.Split(stdout, "\n") {
			f := strings.Fields(l)
			if len(f) != 3 || f[0] != "@@" {
				continue
			}
			i, err1 := strconv.Atoi(f[1])
			v, err2 := strconv.ParseUint(f[2], 16, 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("kdtrace: bad line %q", l)
			}
			got[i] = v
		}
	}
	for i, it := range items {
		name := it.stop.String() + " " + it.v.Name
		v, ok := got[i]
		switch {
		case refused[i] != "":
			res.Figures.Missing++
			res.Missing = append(res.Missing, name+": "+refused[i])
		case !ok:
			res.Figures.Missing++
			res.Missing = append(res.Missing, name+": its probe printed nothing")
		case mask(v, it.v.Size) == mask(it.v.Value, it.v.Size):
			res.Equal++
		default:
			res.Figures.Differ++
			res.Differ = append(res.Differ, fmt.Sprintf("%s: gdb %#x, kdtrace %#x", name, it.v.Value, mask(v, it.v.Size)))
		}
	}
	sort.Strings(res.Missing)
	return res, nil
}

func mask(v uint64, size int64) uint64 {
	if size <= 0 || size >= 8 {
		return v
	}
	return v & (1<<(8*size) - 1)
}
