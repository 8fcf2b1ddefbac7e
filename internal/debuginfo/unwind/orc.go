package unwind

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

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

// orcDWARFReg returns the DWARF amd64 number of an ORC register that
// holds an address directly, and false for another.
func orcDWARFReg(r uint8) (int, bool) {
	switch r {
	case orcRegDX:
		return 1, true
	case orcRegDI:
		return 5, true
	case orcRegBP:
		return 6, true
	case orcRegSP:
		return 7, true
	case orcRegR10:
		return 10, true
	case orcRegR13:
		return 13, true
	}
	return 0, false
}

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

// orcTable is a kernel's ORC, read where it lies: a lookup searches
// .orc_unwind_ip and decodes the one entry it finds, so that a probe's
// compile does not decode a kernel's 400,000 entries for one address.
type orcTable struct {
	ips, ents []byte // .orc_unwind_ip, relocated, and .orc_unwind: 4 and 6 bytes an entry
	files     *files // whose mappings ips and ents may be in
	base      uint64 // the address of .orc_unwind_ip
	newLayout bool

	sortOnce sync.Once
	// order holds the entries' indexes in address order when the
	// tables are not sorted (a module's, until the kernel loads it);
	// nil when they are.
	order []int32
	// decoded counts the entries decoded, for the tests.
	decoded atomic.Int64
}

// loadORC reads the file's ORC tables, in fs; nil when it has none.
func loadORC(fs *files, ef *elffile.File) (*orcTable, error) {
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
	t, err := newORC(ipData, entData, ef.Addrs[ipIdx], newLayout)
	if t != nil {
		t.files = fs
	}
	return t, err
}

// newORC makes the table of .orc_unwind_ip, at address base, and
// .orc_unwind, which it keeps.
func newORC(ipData, entData []byte, base uint64, newLayout bool) (*orcTable, error) {
	n := len(ipData) / 4
	if len(ipData)%4 != 0 || len(entData) != 6*n {
		return nil, &cfiError{Section: ".orc_unwind", Entry: "table", Err: fmt.Errorf("%d bytes of addresses for %d bytes of entries", len(ipData), len(entData))}
	}
	return &orcTable{ips: ipData, ents: entData, base: base, newLayout: newLayout}, nil
}

// len returns the number of entries.
func (t *orcTable) len() int { return len(t.ips) / 4 }

// ip returns the address of entry i, an index into the tables.
func (t *orcTable) ip(i int) uint64 {
	v := t.base + uint64(4*i) + uint64(int64(int32(binary.LittleEndian.Uint32(t.ips[4*i:]))))
	runtime.KeepAlive(t) // and its files, mapped
	return v
}

// weak reports whether entry i is a weak section terminator: no rule,
// and not the end of a stack.
func (t *orcTable) weak(i int) bool {
	d := t.ents[6*i : 6*i+6 : 6*i+6]
	w := d[4]&0x0f == orcRegUndefined && (t.newLayout && d[5]&7 != 1 || !t.newLayout && d[5]&4 == 0)
	runtime.KeepAlive(t)
	return w
}

// entry decodes entry i.
func (t *orcTable) entry(i int) orcEntry {
	t.decoded.Add(1)
	d := t.ents[6*i:]
	e := orcEntry{
		spOffset: int16(binary.LittleEndian.Uint16(d)),
		bpOffset: int16(binary.LittleEndian.Uint16(d[2:])),
		spReg:    d[4] & 0x0f,
		bpReg:    d[4] >> 4,
	}
	if t.newLayout {
		switch typ := d[5] & 7; typ {
		case 0:
			e.typ = 0xff // undefined
		case 1:
			e.end = true
		default:
			e.typ = typ - 2
		}
	} else {
		e.typ, e.end = d[5]&3, d[5]&4 != 0
	}
	runtime.KeepAlive(t)
	return e
}

// compare orders entries i and j by address. The kernel's build sorts
// the tables; a module's are sorted when it is loaded. Among entries of
// one address the weak section terminators come first, so that the
// last, which a lookup takes, is the real one.
func (t *orcTable) compare(i, j int) int {
	if c := cmp.Compare(t.ip(i), t.ip(j)); c != 0 {
		return c
	}
	switch wi, wj := t.weak(i), t.weak(j); {
	case wi && !wj:
		return -1
	case wj && !wi:
		return 1
	}
	return 0
}

// at returns the index of the k-th entry in address order. The first
// call checks the order, and sorts the entries' indexes (stably) when
// they are out of it.
func (t *orcTable) at(k int) int {
	t.sortOnce.Do(func() {
		n := t.len()
		for i := 1; i < n; i++ {
			if t.compare(i-1, i) > 0 {
				t.order = make([]int32, n)
				for j := range t.order {
					t.order[j] = int32(j)
				}
				slices.SortStableFunc(t.order, func(a, b int32) int { return t.compare(int(a), int(b)) })
				break
			}
		}
	})
	if t.order != nil {
		return int(t.order[k])
	}
	return k
}

// row returns the rules of the entry holding pc: the last whose address
// is at or below it.
func (t *orcTable) row(pc uint64) (*Row, error) {
	n := t.len()
	k := sort.Search(n, func(k int) bool { return t.ip(t.at(k)) > pc }) - 1
	if k < 0 {
		return nil, fmt.Errorf(".orc_unwind: %w", ErrNoFrame)
	}
	i := t.at(k)
	hi := ^uint64(0)
	if k+1 < n {
		hi = t.ip(t.at(k + 1))
	}
	return orcRow(t.entry(i), 6*i, t.ip(i), hi)
}

// orcRow returns the rules of entry e, at offset off of .orc_unwind,
// which holds from lo to hi.
func orcRow(e orcEntry, off int, lo, hi uint64) (*Row, error) {
	r := &Row{Lo: lo, Hi: hi, RA: 16, Source: ".orc_unwind", Regs: map[int]rule{}}
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
		reg, ok := orcDWARFReg(e.spReg)
		if !ok {
			return nil, &cfiError{Section: ".orc_unwind", Offset: off, Entry: "entry", Err: fmt.Errorf("stack pointer base register %d", e.spReg)}
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
		return nil, &cfiError{Section: ".orc_unwind", Offset: off, Entry: "entry", Err: fmt.Errorf("type %d", e.typ)}
	}
	switch e.bpReg {
	case orcRegUndefined:
		r.Regs[6] = rule{Kind: RuleSameValue}
	case orcRegPrevSP:
		r.Regs[6] = rule{Kind: RuleOffset, Offset: int64(e.bpOffset)}
	case orcRegBP:
		r.Regs[6] = rule{Kind: ruleExpression, Expr: dwarfexpr.Expr{{Code: dwarfexpr.OpDrop}, {Code: dwarfexpr.OpBreg, Reg: 6, Int: int64(e.bpOffset)}}}
	default:
		return nil, &cfiError{Section: ".orc_unwind", Offset: off, Entry: "entry", Err: fmt.Errorf("frame pointer base register %d", e.bpReg)}
	}
	return r, nil
}
