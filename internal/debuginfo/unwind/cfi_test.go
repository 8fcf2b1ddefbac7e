package unwind

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
	"github.com/kdtrace/kdtrace/internal/gcctest"
	"github.com/kdtrace/kdtrace/internal/guest"
)

// The call frame tests compile testdata/cfi.c (and cfi.s, hand-written
// frames) with gcc and clang, with and without unwind tables, and a Go
// program, and compare the row at each address of every FDE with what
// readelf --debug-dump=frames-interp prints for it.

// readelfFDE is one FDE as readelf interprets it.
type readelfFDE struct {
	off    int
	lo, hi uint64
	cols   []string // the register columns' names
	rows   []readelfRow
}

type readelfRow struct {
	loc  uint64
	cfa  string
	regs []string // by column
}

var (
	reSection = regexp.MustCompile(`^Contents of the (\S+) section`)
	reCIE     = regexp.MustCompile(`^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ CIE `)
	reFDE     = regexp.MustCompile(`^([0-9a-f]+) [0-9a-f]+ [0-9a-f]+ FDE cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+)`)
)

// readelfFrames runs readelf and returns each section's FDEs, with the
// rows of their CIE when they print none of their own.
func readelfFrames(t *testing.T, file string) map[string][]readelfFDE {
	t.Helper()
	// readelf exits with 1 for some system libraries, having printed
	// their tables and no complaint.
	out, err := exec.Command("readelf", "--debug-dump=frames-interp", file).Output()
	if err != nil && !bytes.Contains(out, []byte("Contents of the")) {
		t.Fatalf("readelf --debug-dump=frames-interp %s: %v", file, err)
	}
	secs := map[string][]readelfFDE{}
	type table struct {
		cols []string
		rows []readelfRow
	}
	cies := map[int]*table{}
	var sec string
	var cur *table
	var curFDE *readelfFDE
	var curCIE int
	flush := func() {
		if curFDE != nil {
			if len(curFDE.rows) == 0 {
				// No instructions of its own: the CIE's row, at the
				// FDE's start.
				if c := cies[curCIE]; c != nil && len(c.rows) > 0 {
					r := c.rows[len(c.rows)-1]
					r.loc = curFDE.lo
					curFDE.cols, curFDE.rows = c.cols, []readelfRow{r}
				}
			}
			secs[sec] = append(secs[sec], *curFDE)
		}
		curFDE = nil
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := reSection.FindStringSubmatch(line); m != nil {
			flush()
			sec = m[1]
			cies = map[int]*table{}
			continue
		}
		if m := reCIE.FindStringSubmatch(line); m != nil {
			flush()
			off, _ := strconv.ParseInt(m[1], 16, 64)
			cur = &table{}
			cies[int(off)] = cur
			continue
		}
		if m := reFDE.FindStringSubmatch(line); m != nil {
			flush()
			off, _ := strconv.ParseInt(m[1], 16, 64)
			c, _ := strconv.ParseInt(m[2], 16, 64)
			lo, _ := strconv.ParseUint(m[3], 16, 64)
			hi, _ := strconv.ParseUint(m[4], 16, 64)
			curFDE = &readelfFDE{off: int(off), lo: lo, hi: hi}
			curCIE = int(c)
			cur = &table{}
			continue
		}
		if strings.HasSuffix(line, "ZERO terminator") {
			flush()
			cur = nil
			continue
		}
		f := fields(line)
		switch {
		case len(f) >= 2 && f[0] == "LOC" && f[1] == "CFA":
			cur.cols = f[2:]
			if curFDE != nil {
				curFDE.cols = cur.cols
			}
		case len(f) >= 2 && cur != nil && isHex(f[0]):
			loc, _ := strconv.ParseUint(f[0], 16, 64)
			r := readelfRow{loc: loc, cfa: f[1], regs: f[2:]}
			cur.rows = append(cur.rows, r)
			if curFDE != nil {
				curFDE.rows = append(curFDE.rows, r)
			}
		}
	}
	flush()
	return secs
}

// fields splits a row, keeping readelf's "r14 (r14)" as one field.
func fields(line string) []string {
	var out []string
	for _, f := range strings.Fields(line) {
		if strings.HasPrefix(f, "(") && len(out) > 0 {
			out[len(out)-1] += " " + f
			continue
		}
		out = append(out, f)
	}
	return out
}

func isHex(s string) bool {
	_, err := strconv.ParseUint(s, 16, 64)
	return err == nil && len(s) >= 8
}

// amd64Regs are readelf's names of DWARF's amd64 registers.
var amd64Regs = []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"}

func regNum(name string) (int, bool) {
	for i, n := range amd64Regs {
		if n == name {
			return i, true
		}
	}
	if n, ok := strings.CutPrefix(name, "xmm"); ok {
		if i, err := strconv.Atoi(n); err == nil {
			return 17 + i, true
		}
	}
	return 0, false
}

// readelfCFA writes a CFA rule as readelf does.
func readelfCFA(r CFARule) string {
	if len(r.Expr) > 0 {
		return "exp"
	}
	if r.Reg >= 0 && r.Reg < len(amd64Regs) {
		return fmt.Sprintf("%s%+d", amd64Regs[r.Reg], r.Offset)
	}
	return fmt.Sprintf("r%d%+d", r.Reg, r.Offset)
}

// readelfRule writes a register rule as readelf does.
func readelfRule(r rule, ok bool) string {
	if !ok {
		return "u"
	}
	switch r.Kind {
	case ruleExpression:
		return "exp"
	case ruleValExpression:
		return "vexp"
	case ruleRegister:
		if r.Reg < len(amd64Regs) {
			return fmt.Sprintf("r%d (%s)", r.Reg, amd64Regs[r.Reg])
		}
	}
	return r.String()
}

// compareFrames checks every FDE readelf prints for the file against
// our rows, at each row's first, middle and last address, and returns
// how many addresses it checked.
func compareFrames(t *testing.T, file string) int {
	t.Helper()
	f, err := Open(file)
	if err != nil {
		t.Fatal(err)
	}
	f.index()
	if len(f.errs) > 0 {
		t.Errorf("indexing: %v", errors.Join(f.errs...))
	}
	want := readelfFrames(t, file)
	ef, err := elffile.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	rel := ef.F.Type == elf.ET_REL
	funcs, _, err := ef.Symbols(nil)
	if err != nil {
		t.Fatal(err)
	}
	funcAt := map[uint64]bool{}
	for _, s := range funcs {
		funcAt[s.Value] = true
	}
	checked := 0
	for _, s := range f.secs {
		fdes := want[s.name]
		if len(fdes) == 0 {
			t.Errorf("%s: readelf prints no FDE", s.name)
			continue
		}
		// One section at a time: the other may describe the same code.
		one := &Frames{path: f.path, secs: []*cfiSection{s}}
		one.index()
		byOff := map[int]*fdeRef{}
		for i := range one.fdes {
			byOff[int(one.fdes[i].off)] = &one.fdes[i]
		}
		for _, w := range fdes {
			if w.hi <= w.lo {
				continue
			}
			// readelf places an object file's sections at 0, the
			// package one after another: its FDEs must start at
			// functions, where readelf's start at offsets.
			d := byOff[w.off]
			if d == nil {
				t.Errorf("%s FDE %#x: not indexed", s.name, w.off)
				continue
			}
			shift := d.lo - w.lo
			if rel && !funcAt[d.lo] {
				t.Errorf("%s FDE %#x: starts at %#x, where no function does", s.name, w.off, d.lo)
			}
			if !rel && shift != 0 {
				t.Errorf("%s FDE %#x: starts at %#x, readelf %#x", s.name, w.off, d.lo, w.lo)
			}
			rows := w.rows
			for i, row := range rows {
				if i+1 < len(rows) && rows[i+1].loc == row.loc {
					continue // a later row at the same address wins
				}
				hi := w.hi
				if i+1 < len(rows) {
					hi = rows[i+1].loc
				}
				if row.loc >= hi {
					continue
				}
				for _, pc := range []uint64{row.loc, row.loc + (hi-row.loc)/2, hi - 1} {
					checked++
					got, err := one.Row(pc + shift)
					if err != nil {
						t.Errorf("%s FDE %#x: %#x: %v", s.name, w.off, pc, err)
						continue
					}
					got.Lo, got.Hi = got.Lo-shift, got.Hi-shift
					if got.Lo != row.loc || got.Hi != hi {
						t.Errorf("%s FDE %#x: %#x: row [%#x, %#x), readelf [%#x, %#x)", s.name, w.off, pc, got.Lo, got.Hi, row.loc, hi)
					}
					if c := readelfCFA(got.CFA); c != row.cfa {
						t.Errorf("%s FDE %#x: %#x: CFA %s, readelf %s", s.name, w.off, pc, c, row.cfa)
					}
					for j, col := range w.cols {
						n, ok := regNum(col)
						if col == "ra" {
							n, ok = got.RA, true
						}
						if !ok {
							t.Fatalf("readelf column %q: unknown register", col)
						}
						rule, has := got.Regs[n]
						if g := readelfRule(rule, has); j < len(row.regs) && g != row.regs[j] {
							t.Errorf("%s FDE %#x: %#x: %s %s, readelf %s", s.name, w.off, pc, col, g, row.regs[j])
						}
					}
				}
			}
		}
	}
	return checked
}

func TestFramesReadelf(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the fixture's assembly is amd64's")
	}
	gcctest.Need(t, "readelf")
	src, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range []string{"gcc", "clang"} {
		for _, opt := range []string{"-O0", "-O2"} {
			for _, tables := range []string{"-fasynchronous-unwind-tables", "-fno-asynchronous-unwind-tables"} {
				name := cc + opt + tables[1:]
				t.Run(name, func(t *testing.T) {
					gcctest.Need(t, cc)
					prog := filepath.Join(t.TempDir(), "cfi")
					args := []string{opt, "-g", tables, "-o", prog, filepath.Join(src, "cfi.c"), filepath.Join(src, "cfi.s")}
					gcctest.Run(t, "", cc, args...)
					n := compareFrames(t, prog)
					t.Logf("%d addresses checked", n)
				})
			}
		}
	}
	for _, tables := range []string{"-fasynchronous-unwind-tables", "-fno-asynchronous-unwind-tables"} {
		t.Run("object"+tables[1:], func(t *testing.T) {
			gcctest.Need(t, "gcc")
			obj := filepath.Join(t.TempDir(), "cfi.o")
			gcctest.Run(t, "", "gcc", "-O2", "-g", tables, "-c", "-o", obj, filepath.Join(src, "cfi.c"))
			n := compareFrames(t, obj)
			t.Logf("%d addresses checked", n)
		})
	}
	t.Run("go", func(t *testing.T) {
		gcctest.Need(t, "go")
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.21\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		gcctest.Run(t, dir, "go", "build", "-o", "hello", ".")
		n := compareFrames(t, filepath.Join(dir, "hello"))
		t.Logf("%d addresses checked", n)
	})
}

// TestFramesKernel checks the kernel's frames: the CFA is rsp+8 at
// every function's entry, from ORC alone and with DWARF, and along
// vfs_read from its entry to its first jump out, the CFA and the saved
// registers follow its pushes and stack adjustments as objdump shows
// them.
func TestFramesKernel(t *testing.T) {
	path, ok := guest.CachedDebug()
	if !ok {
		t.Skip("no vmlinux with ORC: set KDTRACE_VMLINUX")
	}
	if testing.Short() {
		t.Skip("short")
	}
	start := time.Now()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.orc == nil {
		t.Fatal("no ORC tables")
	}
	f.index()
	t.Logf("%s: index of %d FDEs and %d ORC entries built in %v", path, len(f.fdes), f.orc.len(), time.Since(start))
	ef, err := elffile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	funcs, _, err := ef.Symbols(nil)
	if err != nil {
		t.Fatal(err)
	}
	orcOnly := &Frames{path: path, orc: f.orc}
	n, none := 0, 0
	start = time.Now()
	for _, s := range funcs {
		if strings.Contains(s.Name, ".cold") {
			continue // a function's unlikely part: entered by a jump, inside its frame
		}
		n++
		for _, fr := range []*Frames{f, orcOnly} {
			r, err := fr.Row(s.Value)
			if errors.Is(err, ErrNoFrame) {
				none++ // assembly objtool was told to skip
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", s.Name, err)
			}
			if got := r.CFA.String(); got != "r7+8" {
				t.Errorf("%s at %#x: CFA %s from %s, want r7+8", s.Name, s.Value, got, r.Source)
			}
			if ra, ok := r.Regs[r.RA]; !ok || ra.Kind != RuleOffset || ra.Offset != -8 {
				t.Errorf("%s at %#x: return address %v, want c-8", s.Name, s.Value, ra)
			}
		}
	}
	t.Logf("%d functions, %d lookups without a frame; %v a lookup", n, none, time.Since(start)/time.Duration(2*n))
	if none > n/100 {
		t.Errorf("%d of %d function entries have no frame", none, n)
	}

	// DWARF against ORC, every third byte of every tenth FDE.
	agree, differ := 0, 0
	for i := 0; i < len(f.fdes); i += 10 {
		d, err := f.entry(&f.fdes[i])
		if err != nil {
			t.Fatal(err)
		}
		for pc := d.lo; pc < d.hi; pc += 3 {
			r, err := d.row(pc)
			if err != nil {
				t.Fatalf("%#x: %v", pc, err)
			}
			if o, err := f.orc.row(pc); err == nil {
				if sameCFA(r.CFA, o.CFA) {
					agree++
				} else {
					differ++
				}
			}
		}
	}
	t.Logf(".debug_frame and ORC agree on the CFA at %d addresses, differ at %d", agree, differ)

	checkVfsRead(t, f, ef, funcs)
}

var objdumpInsn = regexp.MustCompile(`^\s*([0-9a-f]+):\t[0-9a-f ]+\t(\S+)\s*(.*)$`)

// checkVfsRead follows vfs_read's stack from its entry.
func checkVfsRead(t *testing.T, f *Frames, ef *elffile.File, funcs []elf.Symbol) {
	gcctest.Need(t, "objdump")
	var sym elf.Symbol
	for _, s := range funcs {
		if s.Name == "vfs_read" {
			sym = s
		}
	}
	if sym.Size == 0 {
		t.Fatal("no vfs_read")
	}
	out, err := exec.Command("objdump", "-d",
		fmt.Sprintf("--start-address=%#x", sym.Value), fmt.Sprintf("--stop-address=%#x", sym.Value+sym.Size), ef.Path).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	regs := map[string]int{"%rbx": 3, "%rbp": 6, "%r12": 12, "%r13": 13, "%r14": 14, "%r15": 15}
	saved := map[int]int64{}
	depth := int64(8)
	checked := 0
	for _, line := range strings.Split(string(out), "\n") {
		m := objdumpInsn.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pc, _ := strconv.ParseUint(m[1], 16, 64)
		op, args := m[2], m[3]
		r, err := f.Row(pc)
		if err != nil {
			t.Fatalf("vfs_read+%#x: %v", pc-sym.Value, err)
		}
		checked++
		if want := fmt.Sprintf("r7%+d", depth); r.CFA.String() != want {
			t.Errorf("vfs_read+%#x %s %s: CFA %v, objdump says %s", pc-sym.Value, op, args, r.CFA, want)
		}
		for reg, off := range saved {
			if got := r.Regs[reg]; got.Kind != RuleOffset || got.Offset != off {
				t.Errorf("vfs_read+%#x: register %d %v, pushed at c%+d", pc-sym.Value, reg, got, off)
			}
		}
		var n int64
		switch {
		case op == "push":
			depth += 8
			if reg, ok := regs[args]; ok {
				saved[reg] = -depth
			}
		case op == "pop":
			depth -= 8
		case op == "sub" && strings.HasSuffix(args, ",%rsp"):
			if _, err := fmt.Sscanf(args, "$0x%x,%%rsp", &n); err != nil {
				t.Fatalf("%s %s: %v", op, args, err)
			}
			depth += n
		case op == "add" && strings.HasSuffix(args, ",%rsp"):
			if _, err := fmt.Sscanf(args, "$0x%x,%%rsp", &n); err != nil {
				t.Fatalf("%s %s: %v", op, args, err)
			}
			depth -= n
		case op == "jmp" || op == "ret" || op == "leave" || strings.HasSuffix(args, ",%rsp"):
			t.Logf("vfs_read: %d instructions checked, to +%#x (%s %s)", checked, pc-sym.Value, op, args)
			return
		}
	}
	t.Errorf("vfs_read: no jump out")
}

// entry prefixes an entry's body with its length, in the 32- or 64-bit
// format.
func entry(dwarf64 bool, body ...[]byte) []byte {
	b := bytes.Join(body, nil)
	if dwarf64 {
		return append(binary.LittleEndian.AppendUint64([]byte{0xff, 0xff, 0xff, 0xff}, uint64(len(b))), b...)
	}
	return append(binary.LittleEndian.AppendUint32(nil, uint32(len(b))), b...)
}

func le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// synthFrames indexes one section made of entries.
func synthFrames(name string, entries ...[]byte) *Frames {
	s := &cfiSection{name: name, data: bytes.Join(entries, nil), eh: name == ".eh_frame", addr: 0x400000, addrSize: 8}
	f := &Frames{path: "synth", secs: []*cfiSection{s}}
	f.index()
	return f
}

// A version 4 CIE in the 64-bit format, and the instructions compilers
// do not emit (DW_CFA_set_loc, remember and restore state across
// advances of each size).
var synthDebugFrame = [][]byte{
	entry(true, le64(^uint64(0)), []byte{4, 0, 8, 0, 1, 0x78, 16,
		0x0c, 7, 8, // def_cfa rsp+8
		0x90, 1}), // offset ra, c-8
	entry(true, le64(0), le64(0x1000), le64(0x100), []byte{
		0x44,       // advance_loc 4
		0x0e, 0x10, // def_cfa_offset 16
		0x86, 2, // offset rbp, c-16
		0x01}, le64(0x1010), []byte{ // set_loc 0x1010
		0x0d, 6, // def_cfa_register rbp
		0x03, 0x20, 0, // advance_loc2 0x20
		0x0a,       // remember_state
		0x0e, 0x20, // def_cfa_offset 32
		0xc6,                   // restore rbp
		0x04}, le32(8), []byte{ // advance_loc4 8
		0x0b,       // restore_state
		0x2e, 0x10, // GNU_args_size 16
	}),
}

func TestFramesSynthetic(t *testing.T) {
	f := synthFrames(".debug_frame", synthDebugFrame...)
	if len(f.errs) > 0 {
		t.Fatal(errors.Join(f.errs...))
	}
	for _, tc := range []struct {
		pc      uint64
		cfa     string
		lo, hi  uint64
		rbp     string
		args    uint64
		wantErr string
	}{
		{pc: 0x0fff, wantErr: "synth: 0xfff: no call frame information covers the address"},
		{pc: 0x1000, cfa: "r7+8", lo: 0x1000, hi: 0x1004, rbp: "u"},
		{pc: 0x100f, cfa: "r7+16", lo: 0x1004, hi: 0x1010, rbp: "c-16"},
		{pc: 0x1010, cfa: "r6+16", lo: 0x1010, hi: 0x1030, rbp: "c-16"},
		{pc: 0x1037, cfa: "r6+32", lo: 0x1030, hi: 0x1038, rbp: "u"},
		{pc: 0x1038, cfa: "r6+16", lo: 0x1038, hi: 0x1100, rbp: "c-16", args: 16},
		{pc: 0x10ff, cfa: "r6+16", lo: 0x1038, hi: 0x1100, rbp: "c-16", args: 16},
		{pc: 0x1100, wantErr: "no call frame information covers the address"},
	} {
		r, err := f.Row(tc.pc)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrNoFrame) {
				t.Errorf("%#x: error %v, want %q", tc.pc, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%#x: %v", tc.pc, err)
			continue
		}
		rbp, ok := r.Regs[6]
		got := fmt.Sprintf("%v [%#x, %#x) rbp %s args %d", r.CFA, r.Lo, r.Hi, readelfRule(rbp, ok), r.ArgsSize)
		want := fmt.Sprintf("%s [%#x, %#x) rbp %s args %d", tc.cfa, tc.lo, tc.hi, tc.rbp, tc.args)
		if got != want {
			t.Errorf("%#x: %s, want %s", tc.pc, got, want)
		}
	}
}

// An .eh_frame CIE "zPLR" whose FDE's start is an indirect pointer
// (DW_EH_PE_indirect|pcrel|sdata4) and whose LSDA is skipped.
func TestFramesIndirect(t *testing.T) {
	cie := entry(false, le32(0), []byte{1, 'z', 'P', 'L', 'R', 0, 1, 0x78, 16,
		7, 0x9b, 0, 0, 0, 0, 0x1b, 0x9b, // aug data: personality enc + ptr, LSDA enc, FDE enc
		0x0c, 7, 8, 0x90, 1})
	// The FDE's CIE pointer is at offset len(cie)+4; its pc field after.
	pcField := uint64(0x400000 + len(cie) + 8)
	fde := entry(false, le32(uint32(len(cie)+4)), le32(0x100), le32(0x40), []byte{4, 0, 0, 0, 0, 0x41, 0x0e, 0x10})
	s := &cfiSection{name: ".eh_frame", data: append(cie, fde...), eh: true, addr: 0x400000, addrSize: 8}
	s.read = func(addr uint64, n int) ([]byte, bool) {
		if addr != pcField+0x100 || n != 8 {
			return nil, false
		}
		return le64(0x2000), true
	}
	f := &Frames{path: "synth", secs: []*cfiSection{s}}
	f.index()
	if len(f.errs) > 0 {
		t.Fatal(errors.Join(f.errs...))
	}
	r, err := f.Row(0x2001)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%v [%#x, %#x)", r.CFA, r.Lo, r.Hi); got != "r7+16 [0x2001, 0x2040)" {
		t.Errorf("got %s, want r7+16 [0x2001, 0x2040)", got)
	}
}

func TestFramesDamaged(t *testing.T) {
	cie := func(version byte, ins ...byte) []byte {
		return entry(false, le32(0xffffffff), []byte{version, 0, 1, 0x78, 16}, ins)
	}
	fde := func(cieOff uint32, ins ...byte) []byte {
		return entry(false, le32(cieOff), le64(0x1000), le64(0x10), ins)
	}
	for _, tc := range []struct {
		name    string
		entries [][]byte
		index   string // the error of indexing
		row     string // the error of the row at 0x1008
	}{
		{name: "version", entries: [][]byte{cie(9), fde(0)},
			index: ".debug_frame: damaged CIE at offset 0x0: version 9",
			row:   "synth: 0x1008: no call frame information covers the address (.debug_frame: damaged CIE at offset 0x0: version 9"},
		{name: "many", entries: [][]byte{cie(9), fde(0), fde(0), fde(0), fde(0), fde(0), fde(0)},
			index: ".debug_frame: 3 more damaged entries"},
		{name: "length", entries: [][]byte{cie(3), {0x40, 0, 0, 0, 1}},
			index: ".debug_frame: damaged entry at offset 0xd: length 0x40 runs past the end of the section",
			row:   "no call frame information covers the address"},
		{name: "cie pointer", entries: [][]byte{cie(3), fde(0x400)},
			index: ".debug_frame: damaged FDE at offset 0xd: CIE pointer 0x400 points past the section"},
		{name: "restore_state", entries: [][]byte{cie(3, 0x0c, 7, 8), fde(0, 0x41, 0x0b)},
			row: "synth: 0x1008: .debug_frame: damaged FDE at offset 0x10: DW_CFA_restore_state at byte 1 with no state remembered"},
		{name: "unknown", entries: [][]byte{cie(3, 0x0c, 7, 8), fde(0, 0x3f)},
			row: "synth: 0x1008: .debug_frame: damaged FDE at offset 0x10: unknown instruction 0x3f at byte 0"},
		{name: "truncated", entries: [][]byte{cie(3, 0x0c, 7), fde(0)},
			row: "synth: 0x1008: .debug_frame: damaged CIE at offset 0x0: instruction at byte 0: truncated DWARF data"},
		{name: "expression", entries: [][]byte{cie(3, 0x0c, 7, 8), fde(0, 0x0f, 5, 0x76)},
			row: "DW_CFA_def_cfa_expression at byte 0: truncated DWARF data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := synthFrames(".debug_frame", tc.entries...)
			if err := errors.Join(f.errs...); tc.index == "" && err != nil || tc.index != "" && (err == nil || !strings.Contains(err.Error(), tc.index)) {
				t.Errorf("indexing: %v, want %q", err, tc.index)
			}
			_, err := f.Row(0x1008)
			if tc.row == "" {
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.row) {
				t.Errorf("row: %v, want %q", err, tc.row)
			}
		})
	}
}

// FuzzFrames decodes any section as .debug_frame and as .eh_frame, and
// runs the instructions of every FDE at its start, middle and end.
func FuzzFrames(f *testing.F) {
	f.Add(bytes.Join(synthDebugFrame, nil), false, uint64(0x1038))
	f.Add(entry(false, le32(0), []byte{1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8}), true, uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, eh bool, pc uint64) {
		name := ".debug_frame"
		if eh {
			name = ".eh_frame"
		}
		fr := synthFrames(name, data)
		fr.Row(pc)
		for _, d := range fr.fdes {
			fr.Row(d.lo)
			fr.Row(d.lo + (d.hi-d.lo)/2)
			fr.Row(d.hi - 1)
		}
	})
}

// orcEntryBytes encodes an ORC entry; typ is the 6.1 type, converted for
// the 6.4 layout.
func orcEntryBytes(sp, bp int16, spReg, bpReg, typ uint8, end, newLayout bool) []byte {
	b := binary.LittleEndian.AppendUint16(nil, uint16(sp))
	b = binary.LittleEndian.AppendUint16(b, uint16(bp))
	b = append(b, spReg|bpReg<<4)
	switch {
	case newLayout && end:
		return append(b, 1)
	case newLayout && spReg == orcRegUndefined:
		return append(b, 0)
	case newLayout:
		return append(b, typ+2)
	case end:
		return append(b, typ|4)
	}
	return append(b, typ)
}

func TestORC(t *testing.T) {
	for _, newLayout := range []bool{false, true} {
		t.Run(fmt.Sprint("6.4 layout ", newLayout), func(t *testing.T) {
			// Entries at 0x1000 (entry), 0x1001 (after push rbp, a weak
			// terminator first), 0x1004 (rbp-based), 0x1010 (indirect,
			// a stack switch), 0x1020 (regs), 0x1030 (end of stack),
			// given out of order as a module's are.
			type ent struct {
				ip uint64
				e  []byte
			}
			ents := []ent{
				{0x1004, orcEntryBytes(16, -16, orcRegBP, orcRegPrevSP, orcTypeCall, false, newLayout)},
				{0x1000, orcEntryBytes(8, 0, orcRegSP, orcRegUndefined, orcTypeCall, false, newLayout)},
				{0x1001, orcEntryBytes(16, -16, orcRegSP, orcRegPrevSP, orcTypeCall, false, newLayout)},
				{0x1001, orcEntryBytes(0, 0, orcRegUndefined, orcRegUndefined, orcTypeCall, false, newLayout)},
				{0x1010, orcEntryBytes(8, 0, orcRegSPIndirect, orcRegBP, orcTypeCall, false, newLayout)},
				{0x1020, orcEntryBytes(0, 0, orcRegSP, orcRegUndefined, orcTypeRegs, false, newLayout)},
				{0x1030, orcEntryBytes(0, 0, orcRegUndefined, orcRegUndefined, orcTypeCall, true, newLayout)},
			}
			const base = 0x5000
			var ips, entries []byte
			for i, e := range ents {
				ips = binary.LittleEndian.AppendUint32(ips, uint32(int32(int64(e.ip)-int64(base+4*i))))
				entries = append(entries, e.e...)
			}
			o, err := newORC(ips, entries, base, newLayout)
			if err != nil {
				t.Fatal(err)
			}
			f := &Frames{path: "orc", orc: o}
			for _, tc := range []struct {
				pc   uint64
				want string
			}{
				{0xfff, "orc: 0xfff: .orc_unwind: no call frame information covers the address"},
				{0x1000, "r7+8 [0x1000, 0x1001) rbp s ra c-8"},
				{0x1003, "r7+16 [0x1001, 0x1004) rbp c-16 ra c-8"},
				{0x1004, "r6+16 [0x1004, 0x1010) rbp c-16 ra c-8"},
				{0x101f, "exp(DW_OP_breg7 8; DW_OP_deref) [0x1010, 0x1020) rbp exp ra c-8"},
				{0x1020, "r7+0 [0x1020, 0x1030) rbp s ra u signal"},
				{0x1030, "orc: 0x1030: .orc_unwind: the entry at 0x1030 ends the stack: no call frame information covers the address"},
			} {
				r, err := f.Row(tc.pc)
				var got string
				if err != nil {
					got = err.Error()
				} else {
					rbp, hasRBP := r.Regs[6]
					ra, hasRA := r.Regs[16]
					got = fmt.Sprintf("%v [%#x, %#x) rbp %s ra %s", r.CFA, r.Lo, r.Hi, readelfRule(rbp, hasRBP), readelfRule(ra, hasRA))
					if r.Signal {
						got += " signal"
					}
				}
				if got != tc.want {
					t.Errorf("%#x: %s, want %s", tc.pc, got, tc.want)
				}
			}
		})
	}
	if _, err := newORC(make([]byte, 8), make([]byte, 6), 0, false); err == nil {
		t.Error("no error for 2 addresses and 1 entry")
	}
}

func FuzzORC(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 8, 0, 0, 0, 5, 0}, uint64(0), false)
	f.Fuzz(func(t *testing.T, data []byte, pc uint64, newLayout bool) {
		n := len(data) / 10
		o, err := newORC(data[:4*n], data[4*n:10*n], 0x1000, newLayout)
		if err != nil {
			t.Fatal(err) // sizes agree by construction
		}
		f := &Frames{path: "orc", orc: o}
		f.Row(pc)
		for i := range o.len() {
			f.Row(o.ip(i))
		}
	})
}

// TestFramesGDB runs the fixture under gdb with a breakpoint at the
// start of every row of its C functions, and compares the CFA our rows
// compute from the registers with the frame address gdb's unwinder
// reports, and the saved registers' addresses with gdb's.
func TestFramesGDB(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the fixture's assembly is amd64's")
	}
	gcctest.Need(t, "gcc", "gdb")
	src, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []string{"-O0", "-O2"} {
		t.Run(opt, func(t *testing.T) {
			dir := t.TempDir()
			prog := filepath.Join(dir, "cfi")
			gcctest.Run(t, dir, "gcc", opt, "-g", "-fno-pie", "-no-pie", "-o", prog, filepath.Join(src, "cfi.c"), filepath.Join(src, "cfi.s"))
			f, err := Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			ef, err := elffile.Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			funcs, _, err := ef.Symbols(nil)
			ef.Close()
			if err != nil {
				t.Fatal(err)
			}
			var script strings.Builder
			script.WriteString("set pagination off\nset confirm off\n")
			rows := map[uint64]*Row{}
			for _, s := range funcs {
				switch s.Name {
				case "with_alloca", "many_saved", "realigned", "sum", "checked", "main":
				default:
					continue
				}
				for pc := s.Value; pc < s.Value+s.Size; {
					r, err := f.Row(pc)
					if err != nil {
						t.Fatalf("%s: %v", s.Name, err)
					}
					rows[pc] = r
					fmt.Fprintf(&script, "break *%#x\ncommands\nsilent\nprintf \"PC %%lx %%lx %%lx\\n\", $pc, $rsp, $rbp\ninfo frame\ncontinue\nend\n", pc)
					pc = r.Hi
				}
			}
			script.WriteString("run\n")
			gdbScript := filepath.Join(dir, "script.gdb")
			if err := os.WriteFile(gdbScript, []byte(script.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("gdb", "-batch", "-nx", "-x", gdbScript, prog).CombinedOutput()
			if err != nil {
				t.Fatalf("gdb: %v\n%s", err, out)
			}
			hits := 0
			var pc, rsp, rbp, cfa uint64
			var r *Row
			savedNext := false
			for _, line := range strings.Split(string(out), "\n") {
				line = strings.TrimSpace(line)
				if _, err := fmt.Sscanf(line, "PC %x %x %x", &pc, &rsp, &rbp); err == nil {
					r = rows[pc]
					continue
				}
				if r == nil {
					continue
				}
				var frame uint64
				if _, err := fmt.Sscanf(line, "Stack level 0, frame at %v:", &frame); err == nil {
					hits++
					base, ok := map[int]uint64{7: rsp, 6: rbp}[r.CFA.Reg]
					if len(r.CFA.Expr) > 0 || !ok {
						t.Errorf("%#x: CFA %v: not computable here", pc, r.CFA)
						r = nil
						continue
					}
					if cfa = base + uint64(r.CFA.Offset); cfa != frame {
						t.Errorf("%#x: CFA %v = %#x, gdb's frame at %#x", pc, r.CFA, cfa, frame)
					}
					continue
				}
				if line == "Saved registers:" {
					savedNext = true
					continue
				}
				if !savedNext {
					continue
				}
				savedNext = false
				// "rbx at 0x7ffe..., rbp at 0x7ffe..., rip at 0x7ffe..."
				gdbSaved := map[int]uint64{}
				for _, item := range strings.Split(line, ", ") {
					var name string
					var addr uint64
					if _, err := fmt.Sscanf(item, "%s at %v", &name, &addr); err != nil {
						t.Fatalf("gdb's saved registers %q: %v", line, err)
					}
					n, ok := regNum(name)
					if name == "rip" {
						n, ok = r.RA, true
					}
					if ok {
						gdbSaved[n] = addr
					}
				}
				for n, rule := range r.Regs {
					if rule.Kind == RuleOffset && gdbSaved[n] != cfa+uint64(rule.Offset) {
						t.Errorf("%#x: register %d saved at CFA%+d = %#x, gdb says %#x", pc, n, rule.Offset, cfa+uint64(rule.Offset), gdbSaved[n])
					}
				}
				for n, addr := range gdbSaved {
					if rule := r.Regs[n]; rule.Kind != RuleOffset {
						t.Errorf("%#x: register %d: rule %v, gdb says saved at %#x", pc, n, rule, addr)
					}
				}
				r = nil
			}
			t.Logf("%d breakpoint hits at %d row starts checked", hits, len(rows))
			if hits == 0 {
				t.Errorf("no breakpoint hit:\n%s", out)
			}
		})
	}
}

// TestFramesFiles compares the frames of the ELF files named, space
// separated, in KDTRACE_FRAMES_FILES with readelf's: system libraries,
// a vmlinux's .debug_frame.
func TestFramesFiles(t *testing.T) {
	files := strings.Fields(os.Getenv("KDTRACE_FRAMES_FILES"))
	if len(files) == 0 {
		t.Skip("no files to compare: set KDTRACE_FRAMES_FILES")
	}
	gcctest.Need(t, "readelf")
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			t.Logf("%s: %d addresses checked", p, compareFrames(t, p))
		})
	}
}

// BenchmarkFramesKernel measures opening a kernel's tables, indexing
// its FDEs, and a lookup at the middle of each function.
func BenchmarkFramesKernel(b *testing.B) {
	path, ok := guest.CachedDebug()
	if !ok {
		b.Skip("no vmlinux with ORC: set KDTRACE_VMLINUX")
	}
	ef, err := elffile.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	funcs, _, err := ef.Symbols(nil)
	ef.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			if _, err := Open(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("index", func(b *testing.B) {
		for b.Loop() {
			f, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			f.index()
		}
	})
	f, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("row", func(b *testing.B) {
		i := 0
		for b.Loop() {
			s := funcs[i%len(funcs)]
			f.Row(s.Value + s.Size/2)
			i++
		}
	})
}

// TestFramesModule reads a kernel module's ORC, whose addresses are
// relocations against its sections, unsorted until the kernel loads
// it: the CFA must be rsp+8 at every function's entry, in the package's
// layout of the module's sections. The module is KDTRACE_MODULE, or
// Debian's xfs.ko where an earlier session unpacked it.
func TestFramesModule(t *testing.T) {
	path := os.Getenv("KDTRACE_MODULE")
	if path == "" {
		m, _ := filepath.Glob("/var/tmp/kdtrace-modules/lib/modules/*/kernel/fs/xfs/xfs.ko")
		if len(m) == 0 {
			t.Skip("no kernel module with ORC: set KDTRACE_MODULE")
		}
		path = m[0]
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if f.orc == nil {
		t.Fatalf("%s: no ORC", path)
	}
	ef, err := elffile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	funcs, _, err := ef.Symbols(nil)
	if err != nil {
		t.Fatal(err)
	}
	n, none := 0, 0
	for _, s := range funcs {
		if strings.Contains(s.Name, ".cold") {
			continue
		}
		n++
		r, err := f.Row(s.Value)
		if errors.Is(err, ErrNoFrame) {
			none++
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
		if r.CFA.String() != "r7+8" {
			t.Errorf("%s at %#x: CFA %v from %s, want r7+8", s.Name, s.Value, r.CFA, r.Source)
		}
	}
	t.Logf("%s: %d ORC entries, %d functions, %d without a frame", path, f.orc.len(), n, none)
	if n == 0 || none > n/100 {
		t.Errorf("%d of %d function entries have no frame", none, n)
	}
}

func TestOpenErrors(t *testing.T) {
	gcctest.Need(t, "gcc")
	src, err := filepath.Abs("testdata/cfi.c")
	if err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(t.TempDir(), "bare.o")
	gcctest.Run(t, "", "gcc", "-O2", "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-c", "-o", obj, src)
	for _, tc := range []struct {
		path, want string
	}{
		{obj, obj + ": no call frame information (.debug_frame, .eh_frame or ORC)"},
		{src, src + ": not an ELF file"},
		{"testdata/missing", "testdata/missing: no such file or directory"},
	} {
		f, err := Open(tc.path)
		if f != nil || err == nil || err.Error() != tc.want {
			t.Errorf("Open(%s): %v, %v; want %q", tc.path, f, err, tc.want)
		}
	}
}

func TestPointerEncodings(t *testing.T) {
	s := &cfiSection{name: ".eh_frame", eh: true, addr: 0x1000, addrSize: 8, text: 0x2000, got: 0x3000,
		read: func(addr uint64, n int) ([]byte, bool) {
			if addr == 0x1000 && n == 8 {
				return le64(0xabcd), true
			}
			return nil, false
		}}
	for _, tc := range []struct {
		enc  uint8
		data []byte // at offset 4 of the section, address 0x1004
		want uint64
		err  string
	}{
		{enc: peAbsptr, data: le64(0x1122334455667788), want: 0x1122334455667788},
		{enc: peUleb128, data: []byte{0xe5, 0x8e, 0x26}, want: 624485},
		{enc: peUdata2, data: []byte{0x34, 0x12}, want: 0x1234},
		{enc: peUdata4, data: le32(0x89abcdef), want: 0x89abcdef},
		{enc: peUdata8, data: le64(1 << 40), want: 1 << 40},
		{enc: peSleb128, data: []byte{0x7f}, want: ^uint64(0)},
		{enc: peSdata2, data: []byte{0xfe, 0xff}, want: ^uint64(1)},
		{enc: peSdata4 | pePcrel, data: le32(0xfffffffc), want: 0x1000},
		{enc: peSdata4 | peTextrel, data: le32(0x10), want: 0x2010},
		{enc: peSdata4 | peDatarel, data: le32(0x10), want: 0x3010},
		{enc: peSdata8, data: le64(0xfffffffffffffff0), want: ^uint64(15)},
		{enc: peAligned, data: append([]byte{0, 0, 0, 0}, le64(0x77)...), want: 0x77},
		{enc: peOmit, want: 0},
		{enc: peIndirect | peSdata4 | pePcrel, data: le32(0xfffffffc), want: 0xabcd},
		{enc: peIndirect | peUdata4, data: le32(0x5000), err: "indirect pointer to 0x5000: no contents in the file"},
		{enc: peSdata4 | peFuncrel, data: le32(0), err: "pointer encoding 0x4b is relative to a function"},
		{enc: 0x0f, data: le32(0), err: "unknown pointer encoding 0xf"},
		{enc: peUdata8, data: le32(0), err: "truncated DWARF data"},
	} {
		b := dwarfread.Buf{Data: append([]byte{0, 0, 0, 0}, tc.data...), Pos: 4}
		got, err := s.pointer(&b, tc.enc, 8, true)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%#x: %#x, %v; want error %q", tc.enc, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%#x: %#x, %v; want %#x", tc.enc, got, err, tc.want)
		}
	}
}

// TestFramesEhFrameHdr checks the index against the linker's:
// .eh_frame_hdr's table of FDEs sorted by address (datarel pointers,
// relative to the header).
func TestFramesEhFrameHdr(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the fixture's assembly is amd64's")
	}
	src, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			gcctest.Need(t, cc)
			prog := filepath.Join(t.TempDir(), "cfi")
			gcctest.Run(t, "", cc, "-O2", "-g", "-o", prog, filepath.Join(src, "cfi.c"), filepath.Join(src, "cfi.s"))
			ef, err := elffile.Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			defer ef.Close()
			hdr, eh := ef.F.Section(".eh_frame_hdr"), ef.F.Section(".eh_frame")
			if hdr == nil || eh == nil {
				t.Fatal("no .eh_frame_hdr or .eh_frame")
			}
			data, err := ef.Data(hdr)
			if err != nil {
				t.Fatal(err)
			}
			// version, eh_frame_ptr_enc, fde_count_enc, table_enc, then
			// the pointers.
			hs := &cfiSection{name: ".eh_frame_hdr", data: data, eh: true, addr: hdr.Addr, addrSize: 8, got: hdr.Addr}
			b := dwarfread.Buf{Data: data, Pos: 4}
			if len(data) < 4 || data[0] != 1 {
				t.Fatalf(".eh_frame_hdr version %v", data[:min(len(data), 1)])
			}
			ptr := func(enc uint8) uint64 {
				v, err := hs.pointer(&b, enc, 8, true)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
			if p := ptr(data[1]); p != eh.Addr {
				t.Errorf("eh_frame_ptr %#x, .eh_frame at %#x", p, eh.Addr)
			}
			count := ptr(data[2])
			table := map[int]uint64{} // FDE offset: its start
			for range count {
				lo := ptr(data[3])
				table[int(ptr(data[3])-eh.Addr)] = lo
			}
			f, err := Open(prog)
			if err != nil {
				t.Fatal(err)
			}
			f.index()
			n := 0
			for _, d := range f.fdes {
				if !f.secs[d.rank].eh {
					continue
				}
				n++
				if lo, ok := table[int(d.off)]; !ok || lo != d.lo {
					t.Errorf("FDE at %#x for [%#x, %#x): .eh_frame_hdr has %#x, %v", d.off, d.lo, d.hi, lo, ok)
				}
			}
			if n == 0 || n > len(table) {
				t.Errorf("%d FDEs indexed, %d in .eh_frame_hdr", n, len(table))
			}
		})
	}
}
