package unwind

import (
	"cmp"
	"debug/elf"
	"encoding/binary"
	"errors"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
)

// .eh_frame_hdr is the table the linker writes of a program's FDEs
// sorted by address, for the runtime's unwinder to search: a version,
// the encodings of the three fields that follow, a pointer to
// .eh_frame, the number of FDEs, then (initial location, FDE address)
// pairs. Where .eh_frame is an image's only table, a lookup searches it
// and decodes the few FDEs find would look at, rather than indexing all
// of them (76,000 in nodejs: 20 to 40 ms).

// hdrTableEnc is the encoding of the pairs that GNU ld, gold and lld
// write, DW_EH_PE_datarel|DW_EH_PE_sdata4: 4-byte offsets from the
// header. A table of another encoding is not read.
const hdrTableEnc = peDatarel | peSdata4

// ehHdr is an image's .eh_frame_hdr.
type ehHdr struct {
	table []byte // the pairs, 8 bytes each, where the file is mapped
	addr  uint64 // of the header: the base of the pairs
	// decoded counts the FDEs decoded, for the tests.
	decoded atomic.Int64
}

// loadHdr reads the .eh_frame_hdr of ef for eh, its .eh_frame; nil
// when it has none, or one that is not read here (another encoding, a
// pointer to another .eh_frame).
func loadHdr(ef *elffile.File, eh *cfiSection) *ehHdr {
	i := slices.IndexFunc(ef.F.Sections, func(s *elf.Section) bool { return s.Name == ".eh_frame_hdr" })
	if i < 0 || ef.F.Sections[i].Type == elf.SHT_NOBITS || ef.F.Type == elf.ET_REL {
		return nil
	}
	d, err := ef.Data(ef.F.Sections[i])
	if err != nil || len(d) < 4 || d[0] != 1 || d[3] != hdrTableEnc || uint64(len(eh.data)) > math.MaxUint32 {
		return nil
	}
	addr := ef.Addrs[i]
	hs := &cfiSection{name: ".eh_frame_hdr", data: d, eh: true, addr: addr, addrSize: eh.addrSize, got: addr}
	b := dwarfread.Buf{Data: d, Pos: 4}
	if p, err := hs.pointer(&b, d[1], eh.addrSize, true); err != nil || p != eh.addr {
		return nil
	}
	n, err := hs.pointer(&b, d[2], eh.addrSize, true)
	if err != nil || n > uint64(len(d)-b.Pos)/8 {
		return nil
	}
	return &ehHdr{table: d[b.Pos : b.Pos+8*int(n)], addr: addr}
}

func (h *ehHdr) len() int { return len(h.table) / 8 }

// pair returns the initial location of entry i and the address of its
// FDE.
func (h *ehHdr) pair(i int) (lo, fde uint64) {
	lo = h.addr + uint64(int64(int32(binary.LittleEndian.Uint32(h.table[8*i:]))))
	fde = h.addr + uint64(int64(int32(binary.LittleEndian.Uint32(h.table[8*i+4:]))))
	runtime.KeepAlive(h)
	return lo, fde
}

// findHdr is find through .eh_frame_hdr. It walks the table's entries
// back from the last starting at or below pc, an address's entries at
// a time, decoding their FDEs, as find walks the index: the first that
// covers pc wins, and the walk ends after 16 FDEs. An FDE the index
// leaves out (one that cannot be decoded, or covers nothing) is left
// out here, and so is one that does not start where the table says.
// Most lookups decode one FDE.
func (f *Frames) findHdr(pc uint64) *fdeRef {
	h, s := f.hdr, f.secs[0]
	defer runtime.KeepAlive(s.files)
	k := sort.Search(h.len(), func(i int) bool {
		lo, _ := h.pair(i)
		return lo > pc
	}) - 1
	cies := map[int]cieResult{}
	seen := 0
	for k >= 0 && seen < 16 {
		lo, _ := h.pair(k)
		var group []fdeRef
		for ; k >= 0; k-- {
			l, at := h.pair(k)
			if l != lo {
				break
			}
			if at < s.addr || at-s.addr >= uint64(len(s.data)) {
				continue
			}
			h.decoded.Add(1)
			if r, err := s.fdeAt(cies, int(at-s.addr)); err == nil && r.lo == lo && r.hi > r.lo {
				group = append(group, r)
			}
		}
		// In the index's order: by offset.
		slices.SortFunc(group, func(a, b fdeRef) int { return cmp.Compare(a.off, b.off) })
		for _, r := range group {
			if pc < r.hi {
				return &r
			}
		}
		seen += len(group)
	}
	return nil
}

// fdeAt decodes the FDE at off.
func (s *cfiSection) fdeAt(cies map[int]cieResult, off int) (fdeRef, error) {
	b := dwarfread.Buf{Data: s.data, Pos: off}
	n, dwarf64 := b.UnitLength()
	if b.Err != nil || n == 0 || n > uint64(len(s.data)-b.Pos) {
		return fdeRef{}, &cfiError{s.name, off, "entry", errBadLength}
	}
	end := b.Pos + int(n)
	e := dwarfread.Buf{Data: s.data[:end], Pos: b.Pos}
	idAt := e.Pos
	id := e.Offset(dwarf64)
	if e.Err != nil || s.isCIE(id, dwarf64) {
		return fdeRef{}, &cfiError{s.name, off, "FDE", errNotFDE}
	}
	d, err := s.fde(cies, off, &e, idAt, id)
	if err != nil {
		return fdeRef{}, err
	}
	return d.ref(0), nil
}

var (
	errBadLength = errors.New("bad length")
	errNotFDE    = errors.New("not an FDE")
)
