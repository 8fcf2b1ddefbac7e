package btf

import (
	"hash/crc32"
	"runtime"
	"time"

	"github.com/kdtrace/kdtrace/internal/cachedir"
	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/mmap"
)

// The kernel's type section holds some 130,000 records of varying
// length, and walking it for their offsets, then hashing the names of
// its 15,000 named types, costs about 3 ms: more than the rest of
// compiling most scripts, since the D lexer looks every identifier up
// among the kernel's types. Both depend only on the kernel, so they are
// kept in the cache under the kernel's build-id, as the debug
// information's indexes are, and mapped back in place. The file, some
// 160 KB, is read whole at every run, by its checksum: the sparse
// offsets (see stride) keep it small.

const (
	cacheSuffix  = ".btf"
	cacheMagic   = "kdtrace BTF index\n"
	cacheVersion = 2
	// cacheProbe is how many bytes at each end of the type and string
	// sections the cache records a checksum of, a check beside the
	// build-id and the sizes that the BTF is the one indexed.
	cacheProbe = 4096
)

// UseCache makes m keep its index in dir between runs, in a file named
// for key, which must identify m's BTF: the running kernel's build-id
// for its /sys/kernel/btf/vmlinux. A nil dir or an empty key leaves m
// without a cache. It must be called before m's first lookup.
func (m *Module) UseCache(dir *cachedir.Dir, key string) {
	if dir == nil || key == "" {
		return
	}
	m.mu.Lock()
	m.cache, m.cacheKey = dir, key
	m.mu.Unlock()
}

// sectionSum is the checksum of the ends of m's sections that the cache
// records.
func (m *Module) sectionSum() uint32 {
	sum := uint32(0)
	for _, b := range [][]byte{m.types, m.strs} {
		n := min(len(b), cacheProbe)
		sum = crc32.Update(sum, crc32.IEEETable, b[:n])
		sum = crc32.Update(sum, crc32.IEEETable, b[len(b)-n:])
	}
	return sum
}

// storeIndex writes m's index, with its type table, to the cache; a
// failure only means the next run walks the types again. The caller
// holds m.mu and has walked the types.
func (m *Module) storeIndex() {
	if m.cache != nil {
		cachefile.StoreFile(m.cache, m.cacheKey+cacheSuffix, m.encodeIndex())
	}
}

// encodeIndex returns the cache file of m's index. The caller holds
// m.mu and has walked the types.
func (m *Module) encodeIndex() []byte {
	t := m.table(typeTable)
	e := cachefile.Encoder{B: make([]byte, 0, 128+4*(len(m.offs)+len(t.slots)))}
	e.Str(cacheMagic)
	e.U32(cacheVersion)
	e.U64(uint64(len(m.types)))
	e.U64(uint64(len(m.strs)))
	e.U32(m.sectionSum())
	narrow := uint8(0)
	if m.narrowInts {
		narrow = 1
	}
	e.U8(narrow)
	for _, n := range m.sizes {
		e.U32(n)
	}
	e.U32(stride)
	e.U32(m.count)
	for len(e.B)%8 != 0 {
		e.U8(0) // the tables' records are read in place, 4-aligned
	}
	for _, words := range [][]uint32{m.offs, t.slots} {
		e.U64(uint64(len(words)))
		for _, w := range words {
			e.U32(w)
		}
	}
	e.Seal()
	return e.B
}

// loadIndex maps m's index from the cache, reporting whether it was
// there and is m's. The caller holds m.mu.
func (m *Module) loadIndex() bool {
	if m.cache == nil {
		return false
	}
	name := m.cacheKey + cacheSuffix
	f, err := m.cache.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < 4 {
		return false
	}
	data, err := mmap.Map(f, st.Size())
	if err != nil {
		return false
	}
	if !m.decodeIndex(data) {
		mmap.Unmap(data)
		return false
	}
	// m.offs and the type table are the mapping's.
	runtime.AddCleanup(m, func(b []byte) { mmap.Unmap(b) }, data)
	cachefile.Used(m.cache, name, st.ModTime(), time.Now())
	return true
}

// decodeIndex sets m's index from a cache file's contents, reporting
// whether they are whole and m's.
func (m *Module) decodeIndex(data []byte) bool {
	body, ok := cachefile.Unseal(data)
	if !ok {
		return false
	}
	d := cachefile.Decoder{B: body}
	if d.Str() != cacheMagic || d.U32() != cacheVersion ||
		d.U64() != uint64(len(m.types)) || d.U64() != uint64(len(m.strs)) || d.U32() != m.sectionSum() {
		return false
	}
	narrow := d.Take(1)
	var sizes [numTables]uint32
	for i := range sizes {
		sizes[i] = d.U32()
	}
	if d.U32() != stride {
		return false
	}
	count := d.U32()
	d.Take(uint64(-(len(body) - len(d.B)) & 7)) // to the tables' alignment
	offs, ok1 := cachefile.Words[uint32](d.Table(4))
	slots, ok2 := cachefile.Words[uint32](d.Table(4))
	// The checksum holds: the tables are those a walk made. What a
	// foreign file with a good checksum could hold that the lookups
	// would trust (an offset past the type section, a full type table)
	// is checked where it is read rather than here, where only a walk
	// of the type section could check the offsets.
	if d.Bad || len(d.B) != 0 || !ok1 || !ok2 || uint64(len(offs)) != (uint64(count)+stride-1)/stride ||
		len(slots) == 0 || len(slots)&(len(slots)-1) != 0 {
		return false
	}
	m.count, m.offs, m.sizes, m.narrowInts = count, offs, sizes, narrow[0] == 1
	m.names[typeTable] = &table{slots: slots, mask: uint32(len(slots) - 1)}
	return true
}
