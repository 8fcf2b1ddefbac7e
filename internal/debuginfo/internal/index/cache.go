package index

import (
	"encoding/binary"
	"errors"

	"github.com/kdtrace/kdtrace/internal/cachefile"
)

// The cache holds one file per image, named by its build-id (or, without
// one, by a hash of its path). The format is ours:
//
//	magic "KDTRIDX\n", version uint32
//	what the index was built from: image path, size, mtime, build-id;
//	debug file path, size, mtime; source; build statistics
//	the index Tables, each a count then fixed-size records
//	whether the index is partial, and the names it covers then (a table)
//	CRC32-C of all the bytes before it
//
// Integers are little-endian; strings are a uint32 length then bytes.
// A file whose magic, version, checksum or inputs differ is ignored and
// rebuilt.
const (
	cacheMagic   = "KDTRIDX\n"
	cacheVersion = 6
)

// Header identifies the inputs of a cached index.
type Header struct {
	ImagePath, BuildID, DebugPath, Source string
	ImageSize, DebugSize                  uint64
	ImageMtime, DebugMtime                int64
}

var ErrStale = errors.New("index cache of other inputs")

var ErrOldVersion = errors.New("index cache of another version")

// Encode serialises an index. The Tables are 8-byte counts then
// records; Decode reads them in place.
func Encode(h Header, st Stats, t *Tables) []byte {
	nstr := 0
	for _, s := range t.strs {
		nstr += len(s)
	}
	size := 256 + len(h.ImagePath) + len(h.DebugPath) + nstr + strOffSize*(len(t.strs)+1) +
		symbolSize*(len(t.syms)+len(t.thunkSyms)) + byNameSize*len(t.byName) +
		functionSize*len(t.funcs) + copySize*len(t.copies) + rangeSize*len(t.ranges) + 4*len(t.covered)
	e := cachefile.Encoder{B: make([]byte, 0, size)}
	e.B = append(e.B, cacheMagic...)
	e.U32(cacheVersion)
	e.Str(h.ImagePath)
	e.U64(h.ImageSize)
	e.U64(uint64(h.ImageMtime))
	e.Str(h.BuildID)
	e.Str(h.DebugPath)
	e.U64(h.DebugSize)
	e.U64(uint64(h.DebugMtime))
	e.Str(h.Source)
	for _, v := range []int{st.Units, st.Walked, st.Subprograms, st.Copies, st.Unresolved, st.Nested} {
		e.U64(uint64(v))
	}
	e.U64(uint64(nstr))
	for _, s := range t.strs {
		e.B = append(e.B, s...)
	}
	e.U64(uint64(len(t.strs) + 1))
	off := uint32(0)
	for _, s := range t.strs {
		e.U32(off)
		off += uint32(len(s))
	}
	e.U32(off)
	symbols := func(ss []SymRec) {
		e.U64(uint64(len(ss)))
		for _, s := range ss {
			e.U32(s.Name)
			e.U64(s.Addr)
			e.U64(s.Size)
		}
	}
	symbols(t.syms)
	symbols(t.thunkSyms)
	e.U64(uint64(len(t.byName)))
	for _, v := range t.byName {
		e.U32(v)
	}
	e.U64(uint64(len(t.funcs)))
	for _, f := range t.funcs {
		e.U32(f.Name)
		e.U8(f.Flags)
		e.U32(f.Copies)
		e.U32(f.N)
	}
	e.U64(uint64(len(t.copies)))
	for _, c := range t.copies {
		e.U32(c.Sym)
		e.U8(c.Flags)
		e.U32(c.Line)
		e.U32(c.File)
		e.U64(c.Entry)
		e.U32(c.Ranges)
		e.U32(c.N)
		e.U32(c.View)
		e.U32(c.Stmt)
	}
	e.U64(uint64(len(t.ranges)))
	for _, r := range t.ranges {
		e.U64(r.Lo)
		e.U64(r.Hi)
	}
	partial := uint8(0)
	if t.partial {
		partial = 1
	}
	e.U8(partial)
	e.U64(uint64(len(t.covered)))
	for _, n := range t.covered {
		e.U32(n)
	}
	e.Seal()
	return e.B
}

// Decode checks a serialised index and returns a view of it, which
// refers to data.
func Decode(data []byte) (h Header, st Stats, x *Index, err error) {
	if len(data) < len(cacheMagic)+8 || string(data[:len(cacheMagic)]) != cacheMagic {
		return h, st, nil, errors.New("bad magic")
	}
	// Another version is no damage: its checksum may be another's.
	if binary.LittleEndian.Uint32(data[len(cacheMagic):]) != cacheVersion {
		return h, st, nil, ErrOldVersion
	}
	body, ok := cachefile.Unseal(data)
	if !ok {
		return h, st, nil, errors.New("checksum mismatch")
	}
	d := cachefile.Decoder{B: body[len(cacheMagic)+4:]}
	h.ImagePath = d.Str()
	h.ImageSize = d.U64()
	h.ImageMtime = int64(d.U64())
	h.BuildID = d.Str()
	h.DebugPath = d.Str()
	h.DebugSize = d.U64()
	h.DebugMtime = int64(d.U64())
	h.Source = d.Str()
	st.Units, st.Walked, st.Subprograms, st.Copies, st.Unresolved, st.Nested = int(d.U64()), int(d.U64()), int(d.U64()), int(d.U64()), int(d.U64()), int(d.U64())
	x = new(Index)
	x.strs = d.Take(d.U64())
	x.strOff = d.Table(strOffSize)
	x.syms = d.Table(symbolSize)
	x.ThunkSyms = d.Table(symbolSize)
	x.ByName = d.Table(byNameSize)
	x.Funcs = d.Table(functionSize)
	x.copies = d.Table(copySize)
	x.ranges = d.Table(rangeSize)
	x.Partial = d.U8() == 1
	x.covered = d.Table(4)
	if d.Bad || len(d.B) != 0 || x.strOff.Len() == 0 || cachefile.U32(x.strOff.Rec(x.strOff.Len()-1)) != uint32(len(x.strs)) {
		return h, st, nil, errors.New("truncated or malformed")
	}
	return h, st, x, nil
}
