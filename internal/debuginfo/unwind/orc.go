package unwind

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"

	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
)

// ORC: the unwind tables objtool writes into a Linux x86-64 kernel built
// with CONFIG_UNWINDER_ORC, which has no .eh_frame, and whose
// .debug_frame gcc omits under -fno-asynchronous-unwind-tables unless
// asked. .orc_unwind_ip holds, for each entry, the entry's first
// address as a 32-bit offset from the field itself; .orc_unwind holds
// the entries, 6 bytes each (arch/x86/include/asm/orc_types.h):
//
//	s16 sp_offset; s16 bp_offset;
//	sp_reg:4, bp_reg:4, then in Linux 6.1 type:2 end:1,
//	from 6.4 (which adds .orc_header) type:3 signal:1.
//
// An entry holds from its address to the next entry's. sp_reg and
// sp_offset give the previous frame's stack pointer, the CFA in DWARF's
// terms; bp_reg and bp_offset where the caller's rbp was saved.

// ORC base registers.
const (
	orcRegUndefined  = 0
	orcRegPrevSP     = 1
	orcRegDX         = 2
	orcRegDI         = 3
	orcRegBP         = 4
	orcRegSP         = 5
	orcRegR10        = 6
	orcRegR13        = 7
	orcRegBPIndirect = 8
	orcRegSPIndirect = 9
)

// orcDWARFReg maps the ORC registers that hold an address directly to
// DWARF's amd64 numbers.
var orcDWARFReg = map[uint8]int{orcRegDX: 1, orcRegDI: 5, orcRegBP: 6, orcRegSP: 7, orcRegR10: 10, orcRegR13: 13}

// The frame types, numbered as in Linux 6.1. Linux 6.4's are one more
// (0 and 1 became "undefined" and "end of stack").
const (
	orcTypeCall        = 0
	orcTypeRegs        = 1
	orcTypeRegsPartial = 2
)

type orcEntry struct {
	spOffset, bpOffset int16
	spReg, bpReg       uint8
	typ                uint8
	end                bool // the bottom of a kernel stack
}

// orcTable is a kernel's ORC, sorted by address.
type orcTable struct {
	ips     []uint64
	entries []orcEntry
}

// loadORC reads the file's ORC tables; nil when it has none.
func loadORC(ef *elffile.File) (*orcTable, error) {
	ipSec, entSec := ef.F.Section(".orc_unwind_ip"), ef.F.Section(".orc_unwind")
	if ipSec == nil || entSec == nil || ipSec.Type == elf.SHT_NOBITS || entSec.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	newLayout := ef.F.Section(".orc_header") != nil
	var ipIdx int
	for i, s := range ef.F.Sections {
		if s == ipSec {
			ipIdx = i
		}
	}
	ipData, err := ef.Data(ipSec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ef.Path, err)
	}
	if ef.F.Type == elf.ET_REL {
		if ipData, err = ef.Relocate(ipIdx, ipData); err != nil {
			return nil, fmt.Errorf("%s: relocating .orc_unwind_ip: %w", ef.Path, err)
		}
	}
	entData, err := ef.Data(entSec)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ef.Path, err)
	}
	return decodeORC(ipData, entData, ef.Addrs[ipIdx], newLayout)
}

// decodeORC decodes the tables, .orc_unwind_ip at address base.
func decodeORC(ipData, entData []byte, base uint64, newLayout bool) (*orcTable, error) {
	n := len(ipData) / 4
	if len(ipData)%4 != 0 || len(entData) != 6*n {
		return nil, &cfiError{Section: ".orc_unwind", Entry: "table", Err: fmt.Errorf("%d bytes of addresses for %d bytes of entries", len(ipData), len(entData))}
	}
	type pair struct {
		ip uint64
		e  orcEntry
	}
	ps := make([]pair, n)
	for i := range n {
		p := &ps[i]
		p.ip = base + uint64(4*i) + uint64(int64(int32(binary.LittleEndian.Uint32(ipData[4*i:]))))
		d := entData[6*i:]
		p.e = orcEntry{
			spOffset: int16(binary.LittleEndian.Uint16(d)),
			bpOffset: int16(binary.LittleEndian.Uint16(d[2:])),
			spReg:    d[4] & 0x0f,
			bpReg:    d[4] >> 4,
		}
		if newLayout {
			switch t := d[5] & 7; t {
			case 0:
				p.e.typ = 0xff // undefined
			case 1:
				p.e.end = true
			default:
				p.e.typ = t - 2
			}
		} else {
			p.e.typ, p.e.end = d[5]&3, d[5]&4 != 0
		}
	}
	// The kernel's build sorts the tables; a module's are sorted when it
	// is loaded. Among entries of one address the weak section
	// terminators (undefined, not an end) come first, so that the last,
	// which a lookup takes, is the real one.
	weak := func(e orcEntry) bool { return e.spReg == orcRegUndefined && !e.end }
	order := func(a, b pair) int {
		if c := cmp.Compare(a.ip, b.ip); c != 0 {
			return c
		}
		switch wa, wb := weak(a.e), weak(b.e); {
		case wa && !wb:
			return -1
		case wb && !wa:
			return 1
		}
		return 0
	}
	if !slices.IsSortedFunc(ps, order) {
		slices.SortStableFunc(ps, order)
	}
	t := &orcTable{ips: make([]uint64, n), entries: make([]orcEntry, n)}
	for i, p := range ps {
		t.ips[i], t.entries[i] = p.ip, p.e
	}
	return t, nil
}

// row returns the rules of the entry holding pc: the last whose address
// is at or below it.
func (t *orcTable) row(pc uint64) (*Row, error) {
	i := sort.Search(len(t.ips), func(i int) bool { return t.ips[i] > pc }) - 1
	if i < 0 {
		return nil, fmt.Errorf(".orc_unwind: %w", ErrNoFrame)
	}
	e := t.entries[i]
	r := &Row{Lo: t.ips[i], Hi: ^uint64(0), RA: 16, Source: ".orc_unwind", Regs: map[int]rule{}}
	if i+1 < len(t.ips) {
		r.Hi = t.ips[i+1]
	}
	if e.end || e.spReg == orcRegUndefined || e.typ == 0xff {
		if e.end {
			return nil, fmt.Errorf(".orc_unwind: the entry at %#x ends the stack: %w", r.Lo, ErrNoFrame)
		}
		return nil, fmt.Errorf(".orc_unwind: the entry at %#x has no rule: %w", r.Lo, ErrNoFrame)
	}
	switch e.spReg {
	case orcRegSPIndirect, orcRegBPIndirect:
		reg := 7
		if e.spReg == orcRegBPIndirect {
			reg = 6
		}
		r.CFA = CFARule{Reg: -1, Expr: dwarfexpr.Expr{{Code: dwarfexpr.OpBreg, Reg: reg, Int: int64(e.spOffset)}, {Code: dwarfexpr.OpDeref}}}
	default:
		reg, ok := orcDWARFReg[e.spReg]
		if !ok {
			return nil, &cfiError{Section: ".orc_unwind", Offset: 6 * i, Entry: "entry", Err: fmt.Errorf("stack pointer base register %d", e.spReg)}
		}
		r.CFA = CFARule{Reg: reg, Offset: int64(e.spOffset)}
	}
	switch e.typ {
	case orcTypeCall:
		r.Regs[16] = rule{Kind: RuleOffset, Offset: -8}
	case orcTypeRegs, orcTypeRegsPartial:
		// The "CFA" is then where the interrupted context's struct
		// pt_regs (or its iret frame) was saved.
		r.Signal = true
	default:
		return nil, &cfiError{Section: ".orc_unwind", Offset: 6 * i, Entry: "entry", Err: fmt.Errorf("type %d", e.typ)}
	}
	switch e.bpReg {
	case orcRegUndefined:
		r.Regs[6] = rule{Kind: RuleSameValue}
	case orcRegPrevSP:
		r.Regs[6] = rule{Kind: RuleOffset, Offset: int64(e.bpOffset)}
	case orcRegBP:
		r.Regs[6] = rule{Kind: ruleExpression, Expr: dwarfexpr.Expr{{Code: dwarfexpr.OpDrop}, {Code: dwarfexpr.OpBreg, Reg: 6, Int: int64(e.bpOffset)}}}
	default:
		return nil, &cfiError{Section: ".orc_unwind", Offset: 6 * i, Entry: "entry", Err: fmt.Errorf("frame pointer base register %d", e.bpReg)}
	}
	return r, nil
}
