package dwarftypes

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/kdtrace/kdtrace/internal/cachedir"
	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
)

// What Types builds from the whole of a file's DWARF, the name index,
// the unit headers and the unit table, is cached next to the kinst index, in two files named
// by the debug file's build-id (or a hash of its path):
// <key>.types and <key>.units. Reading them spares a second run the walk
// over every unit, which on a kernel touches 200 MB of the file; the
// lookups that follow touch only the DIEs they convert. The format:
//
//	magic, version uint32
//	the debug file: path, size, mtime, build-id
//	the tables (see encodeTypeIndex, encodeUnits)
//	CRC32-C of all the bytes before it
//
// Integers are little-endian, strings a uint32 length then bytes. A file
// whose magic, version, checksum or inputs differ, or that cannot be
// decoded, is ignored and rebuilt; a write is to a temporary file
// renamed over the old one, as for the kinst index.
const (
	typesCacheMagic   = "KDTRTYP\n"
	unitsCacheMagic   = "KDTRUNT\n"
	typesCacheVersion = 2
)

// typesCacheHeader identifies the debug file a cached table was built
// from.
type typesCacheHeader struct {
	path, buildID string
	size          uint64
	mtime         int64
}

func (t *Types) cacheHeader() (typesCacheHeader, error) {
	abs, err := filepath.Abs(t.file)
	if err != nil {
		return typesCacheHeader{}, err
	}
	return typesCacheHeader{path: cachefile.FromRoot(abs, abs), buildID: t.ef.BuildID(), size: uint64(t.ef.Size), mtime: t.ef.Mtime.UnixNano()}, nil
}

// typesCacheName returns the name in the cache of the table with
// suffix ext.
func typesCacheName(h typesCacheHeader, ext string) string {
	key := h.buildID
	if key == "" {
		sum := sha256.Sum256([]byte(h.path))
		key = "path-" + hex.EncodeToString(sum[:16])
	}
	return key + ext
}

// loadTypesCache returns the body of the cache file with suffix ext and
// magic, past its header, when the file is current.
func (t *Types) loadTypesCache(ext, magic string) (*cachefile.Decoder, bool) {
	dir := cacheOf(&t.opts)
	if dir == nil {
		return nil, false
	}
	h, err := t.cacheHeader()
	if err != nil {
		return nil, false
	}
	name := typesCacheName(h, ext)
	f, err := dir.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil || len(data) < len(magic)+8 || string(data[:len(magic)]) != magic {
		return nil, false
	}
	body, ok := cachefile.Unseal(data)
	if !ok {
		return nil, false
	}
	d := &cachefile.Decoder{B: body[len(magic):]}
	if d.U32() != typesCacheVersion {
		return nil, false
	}
	var got typesCacheHeader
	got.path = d.Str()
	got.size = d.U64()
	got.mtime = int64(d.U64())
	got.buildID = d.Str()
	if d.Bad || got != h {
		return nil, false
	}
	cachefile.Used(dir, name, st.ModTime(), time.Now())
	return d, true
}

// storeTypesCache writes the encoded tables in body to the cache file
// with suffix ext. A failure leaves the cache as it was: the tables are
// rebuilt next time.
func (t *Types) storeTypesCache(ext, magic string, body []byte) {
	dir := cacheOf(&t.opts)
	if dir == nil {
		return
	}
	h, err := t.cacheHeader()
	if err != nil {
		return
	}
	e := cachefile.Encoder{}
	e.B = append(e.B, magic...)
	e.U32(typesCacheVersion)
	e.Str(h.path)
	e.U64(h.size)
	e.U64(uint64(h.mtime))
	e.Str(h.buildID)
	e.B = append(e.B, body...)
	e.Seal()
	cachefile.StoreFile(dir, typesCacheName(h, ext), e.B)
}

// nameIndex is the name index as the cache file holds it, searched in
// place: a kernel's 140,000 names in Go maps would cost 16 MB of heap
// and 40 ms to fill at every start, for the few dozen lookups a
// program makes.
type nameIndex struct {
	strs  []byte
	names [numKinds]cachefile.Table // nameRecSize records sorted by name
	enums cachefile.Table           // enumRecSize records sorted by name
	sigs  cachefile.Table           // sigRecSize records sorted by signature
	stats typeIndexStats
}

const (
	nameRecSize = 4 + 4 + 8 + 1 // name's offset in strs and length, DIE, declaration
	enumRecSize = 4 + 4 + 8     // name's offset and length, enum's DIE
	sigRecSize  = 8 + 8         // signature, type's DIE
)

func (x *nameIndex) name(rec []byte) []byte {
	off, n := cachefile.U32(rec), cachefile.U32(rec[4:])
	return x.strs[off : off+n]
}

// search returns the record of t called name.
func (x *nameIndex) search(t cachefile.Table, name string) ([]byte, bool) {
	i := sort.Search(t.Len(), func(i int) bool { return string(x.name(t.Rec(i))) >= name })
	if i < t.Len() && string(x.name(t.Rec(i))) == name {
		return t.Rec(i), true
	}
	return nil, false
}

// lookup returns the DIE of the name of the given kind.
func (x *nameIndex) lookup(kind int, name string) (dieRef, bool) {
	rec, ok := x.search(x.names[kind], name)
	if !ok {
		return dieRef{}, false
	}
	return dieRef{off: cachefile.U64(rec[8:]), decl: rec[16] != 0}, true
}

// enum returns the DIE of the enum with an enumerator called name.
func (x *nameIndex) enum(name string) (uint64, bool) {
	rec, ok := x.search(x.enums, name)
	if !ok {
		return 0, false
	}
	return cachefile.U64(rec[8:]), true
}

// sig returns the DIE of the type of the type unit with signature sig.
func (x *nameIndex) sig(sig uint64) (uint64, bool) {
	t := x.sigs
	i := sort.Search(t.Len(), func(i int) bool { return cachefile.U64(t.Rec(i)) >= sig })
	if i < t.Len() && cachefile.U64(t.Rec(i)) == sig {
		return cachefile.U64(t.Rec(i)[8:]), true
	}
	return 0, false
}

// encodeTypeIndex appends x: the names' bytes; for each kind of name a
// table of (name, DIE offset, declaration) sorted by name; the
// enumerators as (name, offset); the type unit signatures as
// (signature, offset); the statistics. Sorting makes the file the same
// whichever worker found what.
func encodeTypeIndex(e *cachefile.Encoder, x *typeIndex) {
	var strs []byte
	pos := map[string]uint32{}
	intern := func(s string) uint32 {
		p, ok := pos[s]
		if !ok {
			p = uint32(len(strs))
			pos[s] = p
			strs = append(strs, s...)
		}
		return p
	}
	names := make([][]string, len(x.names))
	for i, m := range x.names {
		names[i] = slices.Sorted(maps.Keys(m))
		for _, k := range names[i] {
			intern(k)
		}
	}
	enums := slices.Sorted(maps.Keys(x.enums))
	for _, k := range enums {
		intern(k)
	}
	e.U64(uint64(len(strs)))
	e.B = append(e.B, strs...)
	for i, m := range x.names {
		e.U64(uint64(len(names[i])))
		for _, k := range names[i] {
			r := m[k]
			e.U32(pos[k])
			e.U32(uint32(len(k)))
			e.U64(r.off)
			if r.decl {
				e.U8(1)
			} else {
				e.U8(0)
			}
		}
	}
	e.U64(uint64(len(enums)))
	for _, k := range enums {
		e.U32(pos[k])
		e.U32(uint32(len(k)))
		e.U64(x.enums[k])
	}
	e.U64(uint64(len(x.sigs)))
	for _, k := range slices.Sorted(maps.Keys(x.sigs)) {
		e.U64(k)
		e.U64(x.sigs[k])
	}
	e.U64(uint64(x.stats.units))
	e.U64(uint64(x.stats.named))
}

// decodeTypeIndex returns a view of what encodeTypeIndex wrote, which
// refers to d's bytes. It checks that the names lie in the strings and
// that the tables are sorted, so that a search cannot go astray.
func decodeTypeIndex(d *cachefile.Decoder) (*nameIndex, error) {
	x := &nameIndex{strs: d.Take(d.U64())}
	// Each name must lie in the strings, which lookups slice. That the
	// tables are sorted, as the writer sorts them, the checksum vouches
	// for: comparing 125,000 kernel names took 4 ms of every load.
	named := func(t cachefile.Table) bool {
		for i := range t.Len() {
			rec := t.Rec(i)
			if off, n := uint64(cachefile.U32(rec)), uint64(cachefile.U32(rec[4:])); off+n > uint64(len(x.strs)) {
				return false
			}
		}
		return true
	}
	ok := true
	for i := range x.names {
		x.names[i] = d.Table(nameRecSize)
		ok = ok && named(x.names[i])
	}
	x.enums = d.Table(enumRecSize)
	ok = ok && named(x.enums)
	x.sigs = d.Table(sigRecSize)
	for i := 1; i < x.sigs.Len(); i++ {
		ok = ok && cachefile.U64(x.sigs.Rec(i-1)) < cachefile.U64(x.sigs.Rec(i))
	}
	x.stats.units = int(d.U64())
	x.stats.named = int(d.U64())
	if !ok || d.Bad || len(d.B) != 0 {
		return nil, errors.New("truncated or malformed")
	}
	return x, nil
}

// encodeUnits appends the unit headers of a file and its unit table:
// a count then each header's fields, then the spans as (lo, hi, unit),
// sorted as the table keeps them, then the open units. With the headers
// cached, a second run does not touch the head of every unit (on a
// kernel, each of those page faults maps 64 KB of the file around it).
func encodeUnits(e *cachefile.Encoder, units []dwarfread.Unit, u *unitTable) {
	e.U64(uint64(len(units)))
	for _, h := range units {
		e.U64(uint64(h.Off))
		e.U64(uint64(h.Dies))
		e.U64(uint64(h.End))
		e.U8(uint8(h.Vers))
		e.U8(h.Utype)
		e.U8(uint8(h.AddrSize))
		if h.Dwarf64 {
			e.U8(1)
		} else {
			e.U8(0)
		}
		e.U64(h.AbbrevOff)
	}
	e.U64(uint64(len(u.spans)))
	for _, s := range u.spans {
		e.U64(s.Lo)
		e.U64(s.Hi)
		e.U32(uint32(s.unit))
	}
	e.U64(uint64(len(u.open)))
	for _, i := range u.open {
		e.U32(uint32(i))
	}
}

// decodeUnits reads what encodeUnits wrote, checking that the units lie
// in order within a .debug_info of size infoSize and that the table
// refers to them.
func decodeUnits(d *cachefile.Decoder, infoSize int) ([]dwarfread.Unit, *unitTable, error) {
	bad := errors.New("truncated or malformed")
	n := d.U64()
	if n > uint64(len(d.B))/28 {
		return nil, nil, bad
	}
	units := make([]dwarfread.Unit, n)
	prev := 0
	for i := range units {
		h := &units[i]
		off, dies, end := d.U64(), d.U64(), d.U64()
		vers, utype, addrSize, dwarf64 := d.Take(1), d.Take(1), d.Take(1), d.Take(1)
		h.AbbrevOff = d.U64()
		if d.Bad || off < uint64(prev) || dies < off || end < dies || end > uint64(infoSize) {
			return nil, nil, bad
		}
		h.Off, h.Dies, h.End = int(off), int(dies), int(end)
		h.Vers, h.Utype, h.AddrSize, h.Dwarf64 = int(vers[0]), utype[0], int(addrSize[0]), dwarf64[0] != 0
		prev = h.End
	}
	n = d.U64()
	if n > uint64(len(d.B))/20 {
		return nil, nil, bad
	}
	u := &unitTable{spans: make([]unitSpan, n)}
	for i := range u.spans {
		s := &u.spans[i]
		s.Lo, s.Hi, s.unit = d.U64(), d.U64(), int(d.U32())
		if s.unit >= len(units) || i > 0 && s.Lo < u.spans[i-1].Lo {
			return nil, nil, bad
		}
	}
	n = d.U64()
	if n > uint64(len(d.B))/4 {
		return nil, nil, bad
	}
	u.open = make([]int, n)
	for i := range u.open {
		if u.open[i] = int(d.U32()); u.open[i] >= len(units) {
			return nil, nil, bad
		}
	}
	if d.Bad || len(d.B) != 0 {
		return nil, nil, bad
	}
	u.index()
	return units, u, nil
}

// cacheOf returns the cache directory of opts, as the image's index uses
// it, or nil.
func cacheOf(opts *debuginfo.Options) *cachedir.Dir {
	var warn func(error)
	if opts.Warn != nil {
		warn = func(err error) { opts.Warn(debuginfo.Warning{Err: err}) }
	}
	return cachefile.Open(opts.CacheDir, opts.NoCache, warn)
}
