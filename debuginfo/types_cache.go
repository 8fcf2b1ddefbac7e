package debuginfo

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/kdtrace/kdtrace/debuginfo/internal/dwarfread"
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
	typesCacheVersion = 1
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
	return typesCacheHeader{path: abs, buildID: t.ef.BuildID(), size: uint64(t.ef.Size), mtime: t.ef.Mtime.UnixNano()}, nil
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
func (t *Types) loadTypesCache(ext, magic string) (*decoder, bool) {
	dir := t.opts.cache()
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
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli()) != binary.LittleEndian.Uint32(data[len(body):]) {
		return nil, false
	}
	d := &decoder{b: body[len(magic):]}
	if d.u32() != typesCacheVersion {
		return nil, false
	}
	var got typesCacheHeader
	got.path = d.str()
	got.size = d.u64()
	got.mtime = int64(d.u64())
	got.buildID = d.str()
	if d.bad || got != h {
		return nil, false
	}
	cacheUsed(dir, name, st.ModTime(), time.Now())
	return d, true
}

// storeTypesCache writes the encoded tables in body to the cache file
// with suffix ext. A failure leaves the cache as it was: the tables are
// rebuilt next time.
func (t *Types) storeTypesCache(ext, magic string, body []byte) {
	dir := t.opts.cache()
	if dir == nil {
		return
	}
	h, err := t.cacheHeader()
	if err != nil {
		return
	}
	e := encoder{}
	e.b = append(e.b, magic...)
	e.u32(typesCacheVersion)
	e.str(h.path)
	e.u64(h.size)
	e.u64(uint64(h.mtime))
	e.str(h.buildID)
	e.b = append(e.b, body...)
	e.u32(crc32.Checksum(e.b, castagnoli()))
	storeFile(dir, typesCacheName(h, ext), e.b)
}

// nameIndex is the name index as the cache file holds it, searched in
// place: a kernel's 140,000 names in Go maps would cost 16 MB of heap
// and 40 ms to fill at every start, for the few dozen lookups a
// program makes.
type nameIndex struct {
	strs  []byte
	names [numKinds]table // nameRecSize records sorted by name
	enums table           // enumRecSize records sorted by name
	sigs  table           // sigRecSize records sorted by signature
	stats typeIndexStats
}

const (
	nameRecSize = 4 + 4 + 8 + 1 // name's offset in strs and length, DIE, declaration
	enumRecSize = 4 + 4 + 8     // name's offset and length, enum's DIE
	sigRecSize  = 8 + 8         // signature, type's DIE
)

func (x *nameIndex) name(rec []byte) []byte {
	off, n := u32(rec), u32(rec[4:])
	return x.strs[off : off+n]
}

// search returns the record of t called name.
func (x *nameIndex) search(t table, name string) ([]byte, bool) {
	i := sort.Search(t.len(), func(i int) bool { return string(x.name(t.rec(i))) >= name })
	if i < t.len() && string(x.name(t.rec(i))) == name {
		return t.rec(i), true
	}
	return nil, false
}

// lookup returns the DIE of the name of the given kind.
func (x *nameIndex) lookup(kind int, name string) (dieRef, bool) {
	rec, ok := x.search(x.names[kind], name)
	if !ok {
		return dieRef{}, false
	}
	return dieRef{off: u64(rec[8:]), decl: rec[16] != 0}, true
}

// enum returns the DIE of the enum with an enumerator called name.
func (x *nameIndex) enum(name string) (uint64, bool) {
	rec, ok := x.search(x.enums, name)
	if !ok {
		return 0, false
	}
	return u64(rec[8:]), true
}

// sig returns the DIE of the type of the type unit with signature sig.
func (x *nameIndex) sig(sig uint64) (uint64, bool) {
	t := x.sigs
	i := sort.Search(t.len(), func(i int) bool { return u64(t.rec(i)) >= sig })
	if i < t.len() && u64(t.rec(i)) == sig {
		return u64(t.rec(i)[8:]), true
	}
	return 0, false
}

// encodeTypeIndex appends x: the names' bytes; for each kind of name a
// table of (name, DIE offset, declaration) sorted by name; the
// enumerators as (name, offset); the type unit signatures as
// (signature, offset); the statistics. Sorting makes the file the same
// whichever worker found what.
func encodeTypeIndex(e *encoder, x *typeIndex) {
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
	e.u64(uint64(len(strs)))
	e.b = append(e.b, strs...)
	for i, m := range x.names {
		e.u64(uint64(len(names[i])))
		for _, k := range names[i] {
			r := m[k]
			e.u32(pos[k])
			e.u32(uint32(len(k)))
			e.u64(r.off)
			if r.decl {
				e.u8(1)
			} else {
				e.u8(0)
			}
		}
	}
	e.u64(uint64(len(enums)))
	for _, k := range enums {
		e.u32(pos[k])
		e.u32(uint32(len(k)))
		e.u64(x.enums[k])
	}
	e.u64(uint64(len(x.sigs)))
	for _, k := range slices.Sorted(maps.Keys(x.sigs)) {
		e.u64(k)
		e.u64(x.sigs[k])
	}
	e.u64(uint64(x.stats.units))
	e.u64(uint64(x.stats.named))
}

// decodeTypeIndex returns a view of what encodeTypeIndex wrote, which
// refers to d's bytes. It checks that the names lie in the strings and
// that the tables are sorted, so that a search cannot go astray.
func decodeTypeIndex(d *decoder) (*nameIndex, error) {
	x := &nameIndex{strs: d.take(d.u64())}
	named := func(t table) bool {
		for i := range t.len() {
			rec := t.rec(i)
			if off, n := uint64(u32(rec)), uint64(u32(rec[4:])); off+n > uint64(len(x.strs)) {
				return false
			}
			if i > 0 && string(x.name(t.rec(i-1))) >= string(x.name(rec)) {
				return false
			}
		}
		return true
	}
	ok := true
	for i := range x.names {
		x.names[i] = d.table(nameRecSize)
		ok = ok && named(x.names[i])
	}
	x.enums = d.table(enumRecSize)
	ok = ok && named(x.enums)
	x.sigs = d.table(sigRecSize)
	for i := 1; i < x.sigs.len(); i++ {
		ok = ok && u64(x.sigs.rec(i-1)) < u64(x.sigs.rec(i))
	}
	x.stats.units = int(d.u64())
	x.stats.named = int(d.u64())
	if !ok || d.bad || len(d.b) != 0 {
		return nil, errors.New("truncated or malformed")
	}
	return x, nil
}

// encodeUnits appends the unit headers of a file and its unit table:
// a count then each header's fields, then the spans as (lo, hi, unit),
// sorted as the table keeps them, then the open units. With the headers
// cached, a second run does not touch the head of every unit (on a
// kernel, each of those page faults maps 64 KB of the file around it).
func encodeUnits(e *encoder, units []dwarfread.Unit, u *unitTable) {
	e.u64(uint64(len(units)))
	for _, h := range units {
		e.u64(uint64(h.Off))
		e.u64(uint64(h.Dies))
		e.u64(uint64(h.End))
		e.u8(uint8(h.Vers))
		e.u8(h.Utype)
		e.u8(uint8(h.AddrSize))
		if h.Dwarf64 {
			e.u8(1)
		} else {
			e.u8(0)
		}
		e.u64(h.AbbrevOff)
	}
	e.u64(uint64(len(u.spans)))
	for _, s := range u.spans {
		e.u64(s.Lo)
		e.u64(s.Hi)
		e.u32(uint32(s.unit))
	}
	e.u64(uint64(len(u.open)))
	for _, i := range u.open {
		e.u32(uint32(i))
	}
}

// decodeUnits reads what encodeUnits wrote, checking that the units lie
// in order within a .debug_info of size infoSize and that the table
// refers to them.
func decodeUnits(d *decoder, infoSize int) ([]dwarfread.Unit, *unitTable, error) {
	bad := errors.New("truncated or malformed")
	n := d.u64()
	if n > uint64(len(d.b))/28 {
		return nil, nil, bad
	}
	units := make([]dwarfread.Unit, n)
	prev := 0
	for i := range units {
		h := &units[i]
		off, dies, end := d.u64(), d.u64(), d.u64()
		vers, utype, addrSize, dwarf64 := d.take(1), d.take(1), d.take(1), d.take(1)
		h.AbbrevOff = d.u64()
		if d.bad || off < uint64(prev) || dies < off || end < dies || end > uint64(infoSize) {
			return nil, nil, bad
		}
		h.Off, h.Dies, h.End = int(off), int(dies), int(end)
		h.Vers, h.Utype, h.AddrSize, h.Dwarf64 = int(vers[0]), utype[0], int(addrSize[0]), dwarf64[0] != 0
		prev = h.End
	}
	n = d.u64()
	if n > uint64(len(d.b))/20 {
		return nil, nil, bad
	}
	u := &unitTable{spans: make([]unitSpan, n)}
	for i := range u.spans {
		s := &u.spans[i]
		s.Lo, s.Hi, s.unit = d.u64(), d.u64(), int(d.u32())
		if s.unit >= len(units) || i > 0 && s.Lo < u.spans[i-1].Lo {
			return nil, nil, bad
		}
	}
	n = d.u64()
	if n > uint64(len(d.b))/4 {
		return nil, nil, bad
	}
	u.open = make([]int, n)
	for i := range u.open {
		if u.open[i] = int(d.u32()); u.open[i] >= len(units) {
			return nil, nil, bad
		}
	}
	if d.bad || len(d.b) != 0 {
		return nil, nil, bad
	}
	u.index()
	return units, u, nil
}
