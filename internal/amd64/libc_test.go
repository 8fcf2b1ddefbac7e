package amd64

import (
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestExitSitesLibc runs ExitSites over every inline copy in the C
// library, when its debug information is installed (Debian's libc6-dbg),
// and checks what can be checked at that scale: no errors, and every site
// an instruction of the caller, outside the copy unless it leaves the
// function.
// backTarget reports whether instruction i begins a block that a back
// edge enters: a loop's head, where one iteration's call can end.
func backTarget(f *Function, i int) bool {
	b := f.Blocks[f.blockOf[i]]
	if b.first != i {
		return false
	}
	for _, p := range b.Preds {
		if p.IsBackEdge(b) {
			return true
		}
	}
	return false
}

func TestExitSitesLibc(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: reads the C library's DWARF")
	}
	lib, dbg := openLibc(t)
	d, err := dbg.DWARF()
	if err != nil {
		t.Skip(err)
	}
	callers := libcFunctions(t, lib, dbg)
	sort.Slice(callers, func(i, j int) bool { return callers[i].addr < callers[j].addr })
	caller := func(addr uint64) (funcSym, bool) {
		i := sort.Search(len(callers), func(i int) bool { return callers[i].addr+uint64(len(callers[i].code)) > addr })
		if i < len(callers) && callers[i].addr <= addr {
			return callers[i], true
		}
		return funcSym{}, false
	}

	// Group the copies by caller. The caller's parts come from the
	// ranges of the enclosing DW_TAG_subprogram, which cover its cold
	// part too; names cannot tell, as static functions share them.
	copies := map[uint64][][]Range{}
	parts := map[uint64][]Part{}
	var sub [][2]uint64 // ranges of the subprogram being read
	var cold int
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag == dwarf.TagSubprogram {
			if rs, err := d.Ranges(e); err == nil && len(rs) > 0 {
				sub = rs
			}
			continue
		}
		if e.Tag != dwarf.TagInlinedSubroutine {
			continue
		}
		rs, err := d.Ranges(e)
		if err != nil || len(rs) == 0 {
			continue
		}
		var main funcSym
		var ps []Part
		for _, r := range sub {
			c, ok := caller(r[0])
			if !ok {
				continue
			}
			if strings.HasSuffix(c.name, ".cold") {
				ps = append(ps, Part{c.addr, c.code})
			} else {
				main = c
			}
		}
		if main.code == nil {
			continue
		}
		var copy []Range
		for _, r := range rs {
			copy = append(copy, Range{r[0], r[1]})
			if r[0] < main.addr || r[0] >= main.addr+uint64(len(main.code)) {
				cold++
			}
		}
		copies[main.addr] = append(copies[main.addr], copy)
		parts[main.addr] = ps
	}

	var ncopies, nsites, nerr int
	start := time.Now()
	for _, c := range callers {
		cs := copies[c.addr]
		if len(cs) == 0 {
			continue
		}
		fn, err := NewFunction(c.code, c.addr, parts[c.addr]...)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		for _, copy := range cs {
			ncopies++
			calls, _, err := fn.InlineCalls(copy, nil, nil)
			if err != nil {
				nerr++
				t.Errorf("%s %v: %v", c.name, copy, err)
				continue
			}
			// A site in the copy's code leaves the caller, or is where
			// another call of the copy begins (the end of one loop
			// iteration's call, the start of the next).
			begins := map[uint64]bool{}
			for _, call := range calls {
				begins[call.Entry] = true
				for _, a := range call.Also {
					begins[a] = true
				}
			}
			for _, call := range calls {
				nsites += len(call.Exits)
				for _, x := range call.Exits {
					s := x.Addr
					i, ok := fn.instAt(s)
					inCopy := slices.ContainsFunc(copy, func(r Range) bool { return s >= r.Lo && s < r.Hi })
					if !ok || fn.Insts[i].Op == Data || inCopy && !fn.leaves(fn.Blocks[fn.blockOf[i]], fn.Insts[i]) && !begins[s] && !backTarget(fn, i) {
						t.Errorf("%s %v: bad site %#x", c.name, copy, s)
					}
				}
			}
		}
	}
	elapsed := time.Since(start)
	t.Logf("%d copies in %d callers (%d ranges in cold parts): %d exit sites, %d errors, %v (%.0f copies/s, decoding included)",
		ncopies, len(copies), cold, nsites, nerr, elapsed, float64(ncopies)/elapsed.Seconds())
}

// openLibc opens the C library and its debug file, or skips the test.
func openLibc(t *testing.T) (lib, dbg *elf.File) {
	lib, err := elf.Open(benchLib)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { lib.Close() })
	id := buildID(lib)
	if len(id) < 2 {
		t.Skipf("%s has no build-id", benchLib)
	}
	name := filepath.Join("/usr/lib/debug/.build-id", hex.EncodeToString(id[:1]), hex.EncodeToString(id[1:])+".debug")
	if dbg, err = elf.Open(name); err != nil {
		t.Skipf("no debug file for %s (libc6-dbg): %v", benchLib, err)
	}
	t.Cleanup(func() { dbg.Close() })
	return lib, dbg
}

// libcFunctions returns every function of lib, local ones included, named
// by the symbol table of its debug file dbg.
func libcFunctions(t *testing.T, lib, dbg *elf.File) []funcSym {
	text := lib.Section(".text")
	code, err := text.Data()
	if err != nil {
		t.Fatal(err)
	}
	syms, err := dbg.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	var fns []funcSym
	seen := map[uint64]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Size > 0 && s.Value >= text.Addr && s.Value+s.Size <= text.Addr+text.Size && !seen[s.Value] {
			seen[s.Value] = true
			fns = append(fns, funcSym{s.Name, s.Value, code[s.Value-text.Addr : s.Value-text.Addr+s.Size]})
		}
	}
	return fns
}

// TestDecodeLibc checks every function of the C library against objdump,
// local ones included (its hand-written string functions use AVX2 and
// AVX-512, and its atomics jump over lock prefixes).
func TestDecodeLibc(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: disassembles the C library")
	}
	if _, err := exec.LookPath("objdump"); err != nil {
		t.Skip("objdump not installed")
	}
	lib, dbg := openLibc(t)
	t.Logf("%d functions", compareFunctions(t, benchLib, libcFunctions(t, lib, dbg)))
}

// buildID returns the GNU build-id of f, or nil.
func buildID(f *elf.File) []byte {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return nil
	}
	b, err := s.Data()
	if err != nil || len(b) < 16 {
		return nil
	}
	namesz := binary.LittleEndian.Uint32(b[0:])
	descsz := binary.LittleEndian.Uint32(b[4:])
	desc := 12 + (namesz+3)&^3
	if uint64(desc)+uint64(descsz) > uint64(len(b)) {
		return nil
	}
	return b[desc : desc+descsz]
}
