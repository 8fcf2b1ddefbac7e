package guest

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/arch/x86/x86asm"
)

// A loopFunc is a function of kinst_test.c inlined into one of its loop
// shapes, whose calls the module counts itself.
type loopFunc struct {
	name   string
	caller string
	// perCopy is how many copies of the function's code, at least,
	// the compiler makes of each of its inline copies in DWARF: the
	// shape the test is there for (a peeled first iteration, an
	// unrolled loop, a loop header copied), whose copies one entry
	// site does not all see.
	perCopy int
	// tableReads is how many loads of kinst_loop_table, at least, the
	// caller makes with RIP-relative addresses: one for each iteration
	// of a loop over it unrolled whole.
	tableReads int
}

var loopFuncs = []loopFunc{
	{name: "kinst_loop_peel_f", caller: "kinst_loop_peel", perCopy: 2}, // the first iteration's copy and the loop's
	{name: "kinst_loop_peel_g", caller: "kinst_loop_peel", perCopy: 1},
	{name: "kinst_loop_unroll_f", caller: "kinst_loop_unroll", perCopy: 4}, // four in the loop, up to three before it
	{name: "kinst_loop_unroll_g", caller: "kinst_loop_unroll", perCopy: 4},
	{name: "kinst_loop_while_more", caller: "kinst_loop_while", perCopy: 2}, // before the loop and at its end
	{name: "kinst_loop_while_skip", caller: "kinst_loop_while", perCopy: 1},
	{name: "kinst_loop_while_stop", caller: "kinst_loop_while", perCopy: 1},
	{name: "kinst_loop_nested_inner", caller: "kinst_loop_nested", perCopy: 2}, // the inner loop's first iteration peeled
	{name: "kinst_loop_nested_outer", caller: "kinst_loop_nested", perCopy: 1},
	{name: "kinst_loop_switch_f", caller: "kinst_loop_switch", perCopy: 1},
	{name: "kinst_loop_switch_g", caller: "kinst_loop_switch", perCopy: 1},
	{name: "kinst_loop_find", caller: "kinst_loop_search", perCopy: 1, tableReads: 8}, // eight early returns
	{name: "kinst_loop_find_odd", caller: "kinst_loop_search", perCopy: 1},
}

// loopRuns is what the trigger writes to /proc/kinst_loops: how many
// times the module runs each loop shape, with trip counts of 0 to 10.
const loopRuns = 40

// loopProgram is the D program that counts the entries and returns of
// every loop function, one clause each, keyed by the function's name
// since probefunc is the caller's.
func loopProgram() string {
	var b strings.Builder
	for _, f := range loopFuncs {
		fmt.Fprintf(&b, "kinst::%[1]s:entry { @e[%[1]q] = count(); } kinst::%[1]s:return { @r[%[1]q] = count(); }\n", f.name)
	}
	b.WriteString(`END { printa("entry %s %@d\n", @e); printa("return %s %@d\n", @r); }`)
	return b.String()
}

// loopScript runs the program over one write to /proc/kinst_loops, then
// reads the module's counts of that write, in kmodScript's sections.
func loopScript() string {
	return "printf '#!/bin/sh\\necho $1 >/proc/kinst_loops\\n' >/tmp/loops && chmod +x /tmp/loops || exit 1\n" +
		"echo '=== loops'\nt0=$(cut -d' ' -f1 /proc/uptime)\n" +
		fmt.Sprintf("kdtrace -q -n '%s' -c '/tmp/loops %d' 2>/tmp/err\n", loopProgram(), loopRuns) +
		"s=$?\necho \"=== stderr\"\ncat /tmp/err\necho \"=== status $s uptime $t0 $(cut -d' ' -f1 /proc/uptime)\"\n" +
		"echo '=== loop counts'\ndd if=/proc/kinst_loops bs=4096 2>/tmp/err\n" +
		"s=$?\necho \"=== stderr\"\ncat /tmp/err\necho \"=== status $s uptime 0 0\"\n"
}

var countLineRE = regexp.MustCompile(`^(entry |return |)(\w+) (\d+)$`)

// parseCounts reads "[entry |return ]name count" lines into maps by
// the first word ("" for the module's own lines).
func parseCounts(out string) (map[string]map[string]int, error) {
	m := map[string]map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		if l == "" {
			continue
		}
		sm := countLineRE.FindStringSubmatch(l)
		if sm == nil {
			return nil, fmt.Errorf("unexpected line %q", l)
		}
		n, err := strconv.Atoi(sm[3])
		if err != nil {
			return nil, fmt.Errorf("line %q: %v", l, err)
		}
		kind := strings.TrimSpace(sm[1])
		if m[kind] == nil {
			m[kind] = map[string]int{}
		}
		m[kind][sm[2]] = n
	}
	return m, nil
}

// checkLoops holds kinst::f:entry and :return of every loop function to
// the module's own count of its calls, unless kdtrace warned that an
// inline copy of f cannot be counted exactly.
func checkLoops(t *testing.T, run, truth kmodResult, release string) {
	rows, problems := judgeLoops(run, truth, release)
	for _, r := range rows {
		t.Log(r)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// judgeLoops is checkLoops' verdict: a row of counts for each function,
// and what is wrong.
func judgeLoops(run, truth kmodResult, release string) (rows, problems []string) {
	if truth.status != "0" {
		return nil, []string{fmt.Sprintf("reading /proc/kinst_loops: exit status %s: %s", truth.status, truth.stderr)}
	}
	want, err := parseCounts(truth.out)
	if err != nil {
		return nil, []string{fmt.Sprintf("/proc/kinst_loops: %v:\n%s", err, truth.out)}
	}
	if len(want) != 1 || len(want[""]) != len(loopFuncs) {
		return nil, []string{fmt.Sprintf("/proc/kinst_loops counts other functions than the test's %d:\n%s", len(loopFuncs), truth.out)}
	}
	if run.status != "0" {
		return nil, []string{fmt.Sprintf("exit status %s; stderr:\n%s", run.status, run.stderr)}
	}
	got, err := parseCounts(run.out)
	if err != nil {
		return nil, []string{fmt.Sprintf("%v:\n%s", err, run.out)}
	}
	// Besides the module warning, kdtrace may only warn about inline
	// copies.
	moduleRE := regexp.MustCompile(strings.TrimSuffix(strings.TrimPrefix(moduleWarning(release, `\w+`), "^"), `\n$`) + "$")
	for _, l := range strings.Split(strings.TrimSuffix(run.stderr, "\n"), "\n") {
		if !moduleRE.MatchString(l) && !strings.Contains(l, "inline copy of ") {
			problems = append(problems, fmt.Sprintf("unexpected on stderr: %q", l))
		}
	}
	for _, f := range loopFuncs {
		n, ok := want[""][f.name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: not counted by the module", f.name))
			continue
		case n == 0:
			problems = append(problems, fmt.Sprintf("%s: the module ran it 0 times", f.name))
			continue
		}
		e, r := got["entry"][f.name], got["return"][f.name]
		warned := strings.Contains(run.stderr, "inline copy of "+f.name+" ")
		rows = append(rows, fmt.Sprintf("%-24s in %-18s calls %4d  entry %4d  return %4d  warned %v", f.name, f.caller, n, e, r, warned))
		if !warned && (e != n || r != n) {
			problems = append(problems, fmt.Sprintf("%s: kinst::%[1]s:entry fired %d times and :return %d times for %d calls, and no warning about an inline copy of it", f.name, e, r, n))
		}
	}
	return rows, problems
}

// checkLoopShapes fails, saying so, when the compiler no longer makes
// of the loop functions what the test is there for: each inlined and
// nowhere out of line, and as many copies of code for each DWARF copy
// as perCopy says.
func checkLoopShapes(t *testing.T, ko string) {
	shapes, err := loopShapes(ko)
	if err != nil {
		t.Fatalf("reading %s: %v", ko, err)
	}
	for _, f := range loopFuncs {
		sh := shapes[f.name]
		t.Logf("%-24s in %-18s %d inline copies in DWARF, %d copies of code, caller's loads of kinst_loop_table %d", f.name, f.caller, sh.dwarf, sh.code, sh.tableReads)
		switch {
		case sh.outOfLine:
			t.Errorf("%s has a body of its own: it is not inlined only, as the test needs", f.name)
		case sh.dwarf == 0:
			t.Errorf("%s is not inlined into %s", f.name, f.caller)
		case sh.code < f.perCopy*sh.dwarf:
			t.Errorf("%s has %d copies of code for %d inline copies in %s, want %d each: the compiler no longer makes the loop shape this case tests",
				f.name, sh.code, sh.dwarf, f.caller, f.perCopy)
		case sh.tableReads < f.tableReads:
			t.Errorf("%s reads kinst_loop_table %d times, want %d: the compiler no longer unrolls %s's loop whole",
				f.caller, sh.tableReads, f.tableReads, f.name)
		}
	}
}

// A loopShape is what the compiler made of a loop function in its
// caller: the inline copies DWARF lists, the copies of its code, each
// of which holds one store to its counter, and the caller's loads of
// kinst_loop_table at RIP-relative addresses.
type loopShape struct {
	dwarf, code, tableReads int
	outOfLine               bool
}

// loopShapes reads from the module's .ko, for every loop function, its
// inline copies in DWARF and its copies of code in its caller, and
// whether it also has a body of its own.
func loopShapes(ko string) (map[string]*loopShape, error) {
	f, err := elf.Open(ko)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	shapes := map[string]*loopShape{}
	callerOf := map[string]string{}
	for _, lf := range loopFuncs {
		shapes[lf.name] = &loopShape{}
		callerOf[lf.name] = lf.caller
	}

	d, err := f.DWARF()
	if err != nil {
		return nil, err
	}
	if err := countInlineCopies(d, shapes, callerOf); err != nil {
		return nil, err
	}

	syms, err := f.Symbols()
	if err != nil {
		return nil, err
	}
	// The counters and the table.
	var objects []elf.Symbol
	for _, s := range syms {
		name, ok := strings.CutSuffix(s.Name, "_calls")
		if (ok && shapes[name] != nil || s.Name == "kinst_loop_table") && elf.ST_TYPE(s.Info) == elf.STT_OBJECT {
			objects = append(objects, s)
		}
	}
	seen := map[string]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		if sh := shapes[s.Name]; sh != nil {
			sh.outOfLine = true
		}
		for _, lf := range loopFuncs {
			if lf.caller == s.Name && !seen[s.Name] {
				seen[s.Name] = true
				if err := countCodeCopies(f, syms, s, objects, shapes, callerOf); err != nil {
					return nil, fmt.Errorf("%s: %w", s.Name, err)
				}
			}
		}
	}
	for _, lf := range loopFuncs {
		if !seen[lf.caller] {
			return nil, fmt.Errorf("no function %s", lf.caller)
		}
	}
	return shapes, nil
}

// countInlineCopies counts each loop function's DW_TAG_inlined_subroutine
// entries inside its caller's DW_TAG_subprogram.
func countInlineCopies(d *dwarf.Data, shapes map[string]*loopShape, callerOf map[string]string) error {
	// nameOf follows DW_AT_abstract_origin to a name.
	nameOf := func(e *dwarf.Entry) (string, error) {
		for {
			if n, ok := e.Val(dwarf.AttrName).(string); ok {
				return n, nil
			}
			off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			if !ok {
				return "", nil
			}
			r := d.Reader()
			r.Seek(off)
			var err error
			if e, err = r.Next(); err != nil || e == nil {
				return "", err
			}
		}
	}
	r := d.Reader()
	depth, caller, callerDepth := 0, "", -1
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			return err
		}
		switch {
		case e.Tag == 0: // the end of a list of children
			if depth--; depth <= callerDepth {
				caller, callerDepth = "", -1
			}
			continue
		case e.Tag == dwarf.TagSubprogram && caller == "" && e.Children:
			if caller, err = nameOf(e); err != nil {
				return err
			}
			callerDepth = depth
		case e.Tag == dwarf.TagInlinedSubroutine && caller != "":
			name, err := nameOf(e)
			if err != nil {
				return err
			}
			if sh := shapes[name]; sh != nil && callerOf[name] == caller {
				sh.dwarf++
			}
		}
		if e.Children {
			depth++
		}
	}
}

// countCodeCopies counts, in caller's code, the instructions that store
// to a loop function's counter, one in each copy of its code, and those
// that read kinst_loop_table; objects are the counters and the table.
func countCodeCopies(f *elf.File, syms []elf.Symbol, caller elf.Symbol, objects []elf.Symbol, shapes map[string]*loopShape, callerOf map[string]string) error {
	text := f.Sections[caller.Section]
	data, err := text.Data()
	if err != nil {
		return err
	}
	// The PC-relative relocations in caller's code, by offset.
	type rela struct {
		sym    elf.Symbol
		addend int64
	}
	relas := map[uint64]rela{}
	for _, rs := range f.Sections {
		if rs.Type != elf.SHT_RELA || elf.SectionIndex(rs.Info) != caller.Section {
			continue
		}
		rd, err := rs.Data()
		if err != nil {
			return err
		}
		for ; len(rd) >= 24; rd = rd[24:] {
			off := binary.LittleEndian.Uint64(rd)
			info := binary.LittleEndian.Uint64(rd[8:])
			si := info >> 32
			if off < caller.Value || off >= caller.Value+caller.Size || elf.R_X86_64(uint32(info)) != elf.R_X86_64_PC32 || si == 0 || si > uint64(len(syms)) {
				continue
			}
			relas[off] = rela{syms[si-1], int64(binary.LittleEndian.Uint64(rd[16:]))}
		}
	}
	tableReads := 0
	for pc := caller.Value; pc < caller.Value+caller.Size; {
		in, err := x86asm.Decode(data[pc:caller.Value+caller.Size], 64)
		if err != nil {
			return fmt.Errorf("decoding at %#x: %w", pc, err)
		}
		next := pc + uint64(in.Len)
		// The object the instruction addresses, RIP-relative: S + A - P
		// is the displacement from the next instruction's address.
		object := ""
		for off := pc; off < next; off++ {
			r, ok := relas[off]
			if !ok {
				continue
			}
			target := r.sym.Value + uint64(r.addend) + (next - off)
			for _, o := range objects {
				if o.Section == r.sym.Section && target >= o.Value && target < o.Value+o.Size {
					object = o.Name
				}
			}
		}
		for i, a := range in.Args {
			m, ok := a.(x86asm.Mem)
			if !ok || m.Base != x86asm.RIP {
				continue
			}
			name, _ := strings.CutSuffix(object, "_calls")
			switch {
			case i == 0 && callerOf[name] == caller.Name: // a store
				shapes[name].code++
			case i > 0 && object == "kinst_loop_table":
				tableReads++
			}
		}
		pc = next
	}
	for _, lf := range loopFuncs {
		if lf.caller == caller.Name {
			shapes[lf.name].tableReads = tableReads
		}
	}
	return nil
}

// TestJudgeLoops: the loop verdict holds each function to the module's
// count, and a warning about an inline copy of that function, and of no
// other, excuses it.
func TestJudgeLoops(t *testing.T) {
	const release = "6.1.0-57-amd64"
	module := "kdtrace: warning: kinst::kinst_loop_peel_f: only the copies in modules are listed, the kernel's debug info is missing: running kernel " +
		release + " (build-id " + strings.Repeat("ab", 20) + "): no debug info for kernel: looked in /usr/lib/debug (missing)\n"
	// counts gives every function n calls, peel_f and find peel and
	// find instead.
	counts := func(prefix string, n, peel, find int) string {
		var b strings.Builder
		for _, f := range loopFuncs {
			c := n
			switch f.name {
			case "kinst_loop_peel_f":
				c = peel
			case "kinst_loop_find":
				c = find
			}
			fmt.Fprintf(&b, "%s%s %d\n", prefix, f.name, c)
		}
		return b.String()
	}
	truth := kmodResult{out: counts("", 10, 10, 10), status: "0"}
	for _, tc := range []struct {
		name     string
		run      kmodResult
		truth    kmodResult
		problems []string // the functions named, or "stderr", "status", "truth"
	}{
		{
			name:  "exact",
			run:   kmodResult{out: counts("entry ", 10, 10, 10) + counts("return ", 10, 10, 10), stderr: module, status: "0"},
			truth: truth,
		},
		{
			name:     "undercount",
			run:      kmodResult{out: counts("entry ", 10, 3, 10) + counts("return ", 10, 3, 10), stderr: module, status: "0"},
			truth:    truth,
			problems: []string{"kinst_loop_peel_f"},
		},
		{
			name:     "return overcount",
			run:      kmodResult{out: counts("entry ", 10, 10, 10) + counts("return ", 10, 10, 11), stderr: module, status: "0"},
			truth:    truth,
			problems: []string{"kinst_loop_find"},
		},
		{
			name:     "missing from the aggregation",
			run:      kmodResult{out: strings.Replace(counts("entry ", 10, 10, 10), "entry kinst_loop_peel_g 10\n", "", 1) + counts("return ", 10, 10, 10), stderr: module, status: "0"},
			truth:    truth,
			problems: []string{"kinst_loop_peel_g"},
		},
		{
			name: "warned",
			run: kmodResult{out: counts("entry ", 10, 3, 10) + counts("return ", 10, 3, 10), status: "0",
				stderr: module + "kdtrace: warning: inline copy of kinst_loop_peel_f in kinst_loop_peel: its code is copied by the compiler\n"},
			truth: truth,
		},
		{
			// kinst_loop_find_odd's warning is not kinst_loop_find's.
			name: "warned about another",
			run: kmodResult{out: counts("entry ", 10, 10, 4) + counts("return ", 10, 10, 4), status: "0",
				stderr: module + "kdtrace: warning: inline copy of kinst_loop_find_odd in kinst_loop_search: its code is copied\n"},
			truth:    truth,
			problems: []string{"kinst_loop_find"},
		},
		{
			name:     "other stderr",
			run:      kmodResult{out: counts("entry ", 10, 10, 10) + counts("return ", 10, 10, 10), stderr: module + "kdtrace: warning: something else\n", status: "0"},
			truth:    truth,
			problems: []string{"stderr"},
		},
		{
			name:     "failed",
			run:      kmodResult{stderr: "kdtrace: failed to compile\n", status: "1"},
			truth:    truth,
			problems: []string{"status"},
		},
		{
			name:     "a function the module does not run",
			run:      kmodResult{out: counts("entry ", 10, 0, 10) + counts("return ", 10, 0, 10), stderr: module, status: "0"},
			truth:    kmodResult{out: counts("", 10, 0, 10), status: "0"},
			problems: []string{"kinst_loop_peel_f"},
		},
		{
			name:     "the module counts other functions",
			run:      kmodResult{out: counts("entry ", 10, 10, 10) + counts("return ", 10, 10, 10), stderr: module, status: "0"},
			truth:    kmodResult{out: counts("", 10, 10, 10) + "kinst_loop_other 10\n", status: "0"},
			problems: []string{"truth"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, problems := judgeLoops(tc.run, tc.truth, release)
			var got []string
			for _, p := range problems {
				switch {
				case strings.HasPrefix(p, "unexpected on stderr"):
					got = append(got, "stderr")
				case strings.HasPrefix(p, "exit status"):
					got = append(got, "status")
				case strings.HasPrefix(p, "/proc/kinst_loops"):
					got = append(got, "truth")
				default:
					got = append(got, strings.SplitN(p, ":", 2)[0])
				}
			}
			if diff := cmp.Diff(tc.problems, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%s", diff, strings.Join(problems, "\n"))
			}
		})
	}
}
