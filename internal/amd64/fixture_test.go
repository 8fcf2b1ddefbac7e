package amd64

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A build is one way of compiling the fixtures.
type build struct {
	cc    string
	flags []string
}

func (b build) String() string { return b.cc + " " + strings.Join(b.flags, " ") }

func builds() []build {
	var bs []build
	for _, cc := range []string{"gcc", "clang"} {
		for _, dw := range []string{"-gdwarf-4", "-gdwarf-5"} {
			bs = append(bs,
				build{cc, []string{"-O2", dw, "-fcf-protection=full"}},
				build{cc, []string{"-O2", dw, "-fcf-protection=none"}})
		}
	}
	// As Linux builds the kernel: return thunks, retpolines, int3 after
	// every ret and jmp, no jump tables. clang 14 has no -mfunction-return.
	bs = append(bs, build{"gcc", []string{"-O2", "-g", "-fcf-protection=none", "-mfunction-return=thunk-extern",
		"-mindirect-branch=thunk-extern", "-mharden-sls=all", "-fno-jump-tables"}})
	return bs
}

// compile builds testdata/inline.c and testdata/ext.c into an executable,
// skipping the test when the compiler or objdump is missing.
func compile(t *testing.T, b build) string {
	t.Helper()
	for _, tool := range []string{b.cc, "objdump"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	out := filepath.Join(t.TempDir(), "fixture")
	args := append(slices.Clone(b.flags), "-o", out, "testdata/inline.c", "testdata/ext.c")
	if msg, err := exec.Command(b.cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", b, err, msg)
	}
	return out
}

// objdumpLine is one instruction as objdump prints it.
type objdumpLine struct {
	addr uint64
	text string // mnemonic and operands
}

var objdumpInsn = regexp.MustCompile(`^\s*([0-9a-f]+):\t(.*)$`)

// objdump disassembles the executable sections of file: the oracle for
// instruction boundaries.
func objdump(t *testing.T, file string) []objdumpLine {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "-z", "-w", "--no-show-raw-insn", file).Output()
	if err != nil {
		t.Fatalf("objdump %s: %v", file, err)
	}
	var lines []objdumpLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := objdumpInsn.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		a, err := strconv.ParseUint(m[1], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, objdumpLine{a, strings.TrimSpace(m[2])})
	}
	return lines
}

// within returns the lines in [lo, hi).
func within(lines []objdumpLine, lo, hi uint64) []objdumpLine {
	i, _ := slices.BinarySearchFunc(lines, lo, func(l objdumpLine, a uint64) int { return cmpU64(l.addr, a) })
	j, _ := slices.BinarySearchFunc(lines, hi, func(l objdumpLine, a uint64) int { return cmpU64(l.addr, a) })
	return lines[i:j]
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// funcSym is a function symbol and its code.
type funcSym struct {
	name string
	addr uint64
	code []byte
}

// functions returns the functions of f with their code, from the symbol
// table, or from the dynamic one if f is stripped.
func functions(t testing.TB, f *elf.File) []funcSym {
	t.Helper()
	syms, err := f.Symbols()
	if err != nil {
		if syms, err = f.DynamicSymbols(); err != nil {
			t.Fatal(err)
		}
	}
	var fns []funcSym
	seen := map[uint64]bool{}
	data := map[elf.SectionIndex][]byte{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC || s.Size == 0 || int(s.Section) >= len(f.Sections) || seen[s.Value] {
			continue
		}
		sec := f.Sections[s.Section]
		if sec.Type != elf.SHT_PROGBITS || sec.Flags&elf.SHF_EXECINSTR == 0 {
			continue
		}
		if data[s.Section] == nil {
			b, err := sec.Data()
			if err != nil {
				t.Fatal(err)
			}
			data[s.Section] = b
		}
		code := data[s.Section]
		off := s.Value - sec.Addr
		if off+s.Size > uint64(len(code)) {
			continue
		}
		seen[s.Value] = true
		fns = append(fns, funcSym{s.Name, s.Value, code[off : off+s.Size]})
	}
	return fns
}

// compareWithObjdump checks that Decode finds exactly objdump's
// instruction starts in every function of file whose disassembly has no
// "(bad)", and returns how many functions it checked.
func compareWithObjdump(t *testing.T, file string) int {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return compareFunctions(t, file, functions(t, f))
}

// compareFunctions checks fns, the functions of file, against objdump.
func compareFunctions(t *testing.T, file string, fns []funcSym) int {
	t.Helper()
	lines := objdump(t, file)
	n := 0
	for _, fn := range fns {
		var want []uint64
		bad := false
		for _, l := range within(lines, fn.addr, fn.addr+uint64(len(fn.code))) {
			want = append(want, l.addr)
			bad = bad || strings.Contains(l.text, "(bad)")
		}
		if bad {
			continue
		}
		insts, err := Decode(fn.code, fn.addr)
		if err != nil {
			t.Errorf("%s: %v", fn.name, err)
			continue
		}
		var got []uint64
		for _, in := range insts {
			if in.Op != Data {
				got = append(got, in.Addr)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: instruction starts differ from objdump (-objdump +Decode):\n%s", fn.name, diff)
		}
		n++
	}
	return n
}

func TestDecodeMatchesObjdump(t *testing.T) {
	for _, b := range builds() {
		t.Run(b.String(), func(t *testing.T) {
			if n := compareWithObjdump(t, compile(t, b)); n == 0 {
				t.Error("no functions checked")
			}
		})
	}
}

// TestDecodeSystemBinaries checks whole system binaries, when present.
func TestDecodeSystemBinaries(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: disassembles system binaries")
	}
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump not installed")
	}
	for _, file := range []string{"/bin/bash", "/usr/bin/gdb", "/usr/bin/python3"} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			if _, err := elf.Open(file); err != nil {
				t.Skipf("%s: %v", file, err)
			}
			t.Logf("%d functions", compareWithObjdump(t, file))
		})
	}
}

// TestFtraceNOP builds the fixtures as Linux builds the kernel for
// ftrace, with a 5-byte NOP at every entry, after endbr64 or not.
func TestFtraceNOP(t *testing.T) {
	for _, cet := range []string{"-fcf-protection=full", "-fcf-protection=none"} {
		t.Run(cet, func(t *testing.T) {
			b := build{"gcc", []string{"-O2", "-fno-pie", "-no-pie", "-pg", "-mfentry", "-mnop-mcount", cet}}
			f, err := elf.Open(compile(t, b))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			want := uint64(0)
			if cet == "-fcf-protection=full" {
				want = 4
			}
			fns := functions(t, f)
			for _, name := range []string{"early", "splitter", "sinking", "rotated", "tailer", "merged", "nested"} {
				i := slices.IndexFunc(fns, func(s funcSym) bool { return s.name == name })
				if i < 0 {
					t.Fatalf("no function %s", name)
				}
				sym := fns[i]
				fn, err := NewFunction(sym.code, sym.addr)
				if err != nil {
					t.Fatal(err)
				}
				nop, ok := fn.FtraceNOP()
				if !ok || nop.Addr-fn.Addr != want {
					t.Errorf("%s: FtraceNOP() = %v, %v; want the NOP at offset %d", name, nop, ok, want)
				}
				var oe *OffsetError
				if err := fn.CheckOffset(want + 2); !errors.As(err, &oe) || !oe.InFtraceNOP {
					t.Errorf("%s: CheckOffset(%d) = %v, want inside the ftrace NOP", name, want+2, err)
				}
			}
		})
	}
}

// Patterns over objdump's text for the independent exit oracle.
var (
	atMarker2222 = regexp.MustCompile(`^nopw\s+0x2222\(`)
	atMarker3333 = regexp.MustCompile(`^nopw\s+0x3333\(`)
	atMarker4444 = regexp.MustCompile(`^nopw\s+0x4444\(`)
	atReturn     = regexp.MustCompile(`^(rep )?(ret|jmp\s+[0-9a-f]+ <__x86_return_thunk>)`)
	atTailCall   = regexp.MustCompile(`^jmp\s+[0-9a-f]+ <ext>`)
)

var exitCases = []struct {
	caller, inline string
	want           []*regexp.Regexp // every instruction of the caller matching one is an exit site
}{
	{"early", "find", []*regexp.Regexp{atMarker2222}},
	{"splitter", "split", []*regexp.Regexp{atMarker2222}},
	{"sinking", "sq", []*regexp.Regexp{atMarker2222}},
	{"rotated", "latch", []*regexp.Regexp{atMarker3333, atMarker2222}},
	{"tailer", "tail", []*regexp.Regexp{atReturn, atTailCall}},
	{"merged", "pick", []*regexp.Regexp{atReturn}},
	{"nested", "inner", []*regexp.Regexp{atMarker4444}},
	{"nested", "outer", []*regexp.Regexp{atMarker2222}},
	{"switcher", "sw", []*regexp.Regexp{atMarker2222}},
}

func TestExitSites(t *testing.T) {
	for _, b := range builds() {
		t.Run(b.String(), func(t *testing.T) {
			file := compile(t, b)
			fx := loadFixture(t, file)
			for _, c := range exitCases {
				t.Run(c.caller+"/"+c.inline, func(t *testing.T) {
					fn, copies := fx.copies(t, c.caller, c.inline)
					lines := fx.lines(fn)
					marked := func(i int) bool {
						return slices.ContainsFunc(c.want, func(re *regexp.Regexp) bool { return re.MatchString(lines[i].text) })
					}
					var want []uint64
					for i, l := range lines {
						if marked(i) {
							want = append(want, l.addr)
						}
					}
					sites, err := exitSites(fn, copies)
					if err != nil {
						t.Fatal(err)
					}
					// A site may precede its marker by straight-line
					// caller code (the return value's move, an endbr64
					// landing pad): follow objdump's listing to the
					// marker. No site may lie on another's way, or a
					// path would fire twice.
					var got []uint64
					onPath := map[uint64]uint64{}
					for _, s := range sites {
						path := straightLine(lines, s, copies, marked)
						for _, a := range path[1:] {
							onPath[a] = s
						}
						got = append(got, path[len(path)-1])
					}
					for _, s := range sites {
						if by, ok := onPath[s]; ok {
							t.Errorf("site %#x lies on the straight path from site %#x", s, by)
						}
					}
					slices.Sort(got)
					got = slices.Compact(got)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("ranges %v: exit sites %#x differ from the markers (-want +got):\n%s\n%s", copies, sites, diff, fx.listing(fn, copies))
					}
				})
			}
		})
	}
}

// TestCompatExitSites checks the reference's rule, re-derived from
// objdump's listing: per range, the last instruction inside it when it is
// the last range or ends at the end of the caller, else the range's end.
func TestCompatExitSitesFixtures(t *testing.T) {
	for _, b := range builds() {
		t.Run(b.String(), func(t *testing.T) {
			fx := loadFixture(t, compile(t, b))
			for _, c := range exitCases {
				fn, copies := fx.copies(t, c.caller, c.inline)
				var want []uint64
				for i, r := range copies {
					if i < len(copies)-1 && r.Hi != fn.End() {
						want = append(want, r.Hi)
						continue
					}
					in := within(fx.all, r.Lo, r.Hi)
					if len(in) == 0 {
						t.Fatalf("%s/%s: no instruction in %v", c.caller, c.inline, r)
					}
					want = append(want, in[len(in)-1].addr)
				}
				got, err := fn.CompatExitSites(copies)
				if err != nil {
					t.Fatalf("%s/%s: %v", c.caller, c.inline, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s/%s ranges %v (-want +got):\n%s", c.caller, c.inline, copies, diff)
				}
			}
		})
	}
}

var objdumpJump = regexp.MustCompile(`^jmp\s+([0-9a-f]+) <`)

// straightLine returns the addresses that execution runs through from
// site, by objdump's listing, up to and including the first marked one:
// it follows fallthrough and direct jumps within the function, and stops
// early (at the last address reached) at any other branch, a return, or
// the copy.
func straightLine(lines []objdumpLine, site uint64, copy []Range, marked func(int) bool) []uint64 {
	i := slices.IndexFunc(lines, func(l objdumpLine) bool { return l.addr == site })
	if i < 0 {
		return []uint64{site}
	}
	path := []uint64{site}
	for range len(lines) {
		if marked(i) {
			return path
		}
		l := lines[i]
		switch m := objdumpJump.FindStringSubmatch(l.text); {
		case m != nil:
			t, _ := strconv.ParseUint(m[1], 16, 64)
			i = slices.IndexFunc(lines, func(l objdumpLine) bool { return l.addr == t })
		case strings.HasPrefix(l.text, "j") || strings.HasPrefix(l.text, "ret"):
			return path
		default:
			i++
		}
		if i < 0 || i >= len(lines) || slices.ContainsFunc(copy, func(r Range) bool { return lines[i].addr >= r.Lo && lines[i].addr < r.Hi }) {
			return path
		}
		path = append(path, lines[i].addr)
	}
	return path
}

// A fixture is a compiled executable with its functions, disassembly and
// debug information.
type fixture struct {
	fns   map[string]funcSym
	all   []objdumpLine
	dwarf *dwarf.Data
}

func loadFixture(t *testing.T, file string) *fixture {
	t.Helper()
	f, err := elf.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{fns: map[string]funcSym{}, all: objdump(t, file), dwarf: d}
	for _, fn := range functions(t, f) {
		fx.fns[fn.name] = fn
	}
	return fx
}

// lines returns objdump's listing of fn and its cold parts.
func (fx *fixture) lines(fn *Function) []objdumpLine {
	var lines []objdumpLine
	for _, p := range fn.parts {
		lines = append(lines, within(fx.all, p.Addr, p.Addr+uint64(len(p.Code)))...)
	}
	slices.SortFunc(lines, func(a, b objdumpLine) int { return cmpU64(a.addr, b.addr) })
	return lines
}

// copies decodes caller, with its cold part if gcc made one, and returns
// the ranges of the one copy of inline in it, read from DWARF: the
// DW_TAG_inlined_subroutine whose abstract origin is named inline.
func (fx *fixture) copies(t *testing.T, caller, inline string) (*Function, []Range) {
	t.Helper()
	sym, ok := fx.fns[caller]
	if !ok {
		t.Fatalf("no function %s", caller)
	}
	var cold []Part
	if c, ok := fx.fns[caller+".cold"]; ok {
		cold = append(cold, Part{c.addr, c.code})
	}
	fn, err := NewFunction(sym.code, sym.addr, cold...)
	if err != nil {
		t.Fatal(err)
	}
	var found [][]Range
	r := fx.dwarf.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagInlinedSubroutine {
			continue
		}
		origin, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok || fx.name(t, origin) != inline {
			continue
		}
		rs, err := fx.dwarf.Ranges(e)
		if err != nil {
			t.Fatal(err)
		}
		var copy []Range
		for _, r := range rs {
			if fn.contains(r[0]) {
				copy = append(copy, Range{r[0], r[1]})
			}
		}
		if len(copy) > 0 {
			found = append(found, copy)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d copies of %s in %s, want 1", len(found), inline, caller)
	}
	return fn, found[0]
}

func (fx *fixture) name(t *testing.T, off dwarf.Offset) string {
	r := fx.dwarf.Reader()
	r.Seek(off)
	e, err := r.Next()
	if err != nil || e == nil {
		t.Fatalf("abstract origin %#x: %v", off, err)
	}
	name, _ := e.Val(dwarf.AttrName).(string)
	return name
}

// listing shows the caller with the copy's instructions starred, for
// failure messages.
func (fx *fixture) listing(fn *Function, copy []Range) string {
	var b strings.Builder
	for _, l := range fx.lines(fn) {
		mark := " "
		if slices.ContainsFunc(copy, func(r Range) bool { return l.addr >= r.Lo && l.addr < r.Hi }) {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %#x\t%s\n", mark, l.addr, l.text)
	}
	return b.String()
}
