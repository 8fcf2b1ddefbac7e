package btf

import (
	"bytes"
	"encoding/binary"
	"iter"
	"math/bits"
)

// stride is how many records apart the index keeps offsets: records
// vary in length, so an ID is found by walking on from the offset kept
// for the nearest ID below, at most stride-1 records. That costs finding
// a record some 70 ns more than an offset per record did, where a
// compile finds a few dozen; and the index is a sixteenth the size, so
// that the cache file read, checksummed and faulted in at every run is
// mostly the type table.
const stride = 16

// index walks the type section once, on first use, recording where
// every stride-th record starts.
func (m *Module) index() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.indexLocked()
}

func (m *Module) indexLocked() error {
	if !m.indexed {
		m.indexed = true
		if m.loadIndex() {
			return nil
		}
		m.err = m.walk()
		if m.err == nil {
			m.storeIndex()
		}
	}
	return m.err
}

// A namedRecord is a record of one of the type table's kinds that has a
// name.
type namedRecord struct{ id, nameOff uint32 }

// walk fills in m.count and m.offs; m.named with the records of the
// type table's kinds that have names, which LookupType will need
// (collecting them here saves a second pass over the type section); the
// sizes of the name tables; and m.narrowInts.
func (m *Module) walk() error {
	t := m.types
	n := uint64(len(t))
	// Kernel records average 25 bytes and one in nine is named and in
	// the type table; these capacities avoid regrowing the slices.
	offs := make([]uint32, 0, n/(24*stride)+1)
	named := make([]namedRecord, 0, n/200+1)
	mask := tableKinds[typeTable]
	var count [32]uint32
	var enumerators uint32
	id := m.firstID
	off := uint64(0)
	for ; off+recordSize <= n; id++ {
		info := binary.LittleEndian.Uint32(t[off+4:])
		k := info >> 24 & 0x1f
		if k == 0 || k >= numKinds {
			return m.errorf("type %d: unknown kind %d", id, k)
		}
		count[k]++
		if nameOff := binary.LittleEndian.Uint32(t[off:]); mask>>k&1 != 0 && nameOff != 0 {
			named = append(named, namedRecord{id, nameOff})
		}
		switch k {
		case kindEnum, kindEnum64:
			enumerators += info & 0xffff
		case kindInt:
			if off+16 <= n {
				enc := binary.LittleEndian.Uint32(t[off+12:])
				bits, shift := enc&0xff, enc>>16&0xff
				m.narrowInts = m.narrowInts || shift != 0 || uint64(bits) != 8*uint64(binary.LittleEndian.Uint32(t[off+8:]))
			}
		}
		if (id-m.firstID)%stride == 0 {
			offs = append(offs, uint32(off))
		}
		off += recordLen(info)
	}
	if off != n {
		return m.errorf("type %d: record runs past the end of the type section", id-1)
	}
	m.count, m.offs, m.named = id-m.firstID, offs, named
	m.sizes = [numTables]uint32{
		typeTable: uint32(len(named)),
		funcTable: count[kindFunc],
		varTable:  count[kindVar],
		enumTable: enumerators,
	}
	return nil
}

// recordLen is the length of the record whose info word is info, with
// what follows it.
func recordLen(info uint32) uint64 {
	k := info >> 24 & 0x1f
	return recordSize + uint64(trailerFixed[k]) + uint64(trailerItem[k])*uint64(info&0xffff)
}

// offset returns the offset of the record of type id - m.firstID, or
// false if it is past the end of the type section, which only an index
// read from a foreign cache file can say: the walk checked every
// record. The caller has checked that i < m.count.
func (m *Module) offset(i uint32) (uint64, bool) {
	off := uint64(m.offs[i/stride])
	n := uint64(len(m.types))
	for range i % stride {
		if off+recordSize > n {
			return 0, false
		}
		off += recordLen(binary.LittleEndian.Uint32(m.types[off+4:]))
	}
	return off, off+recordSize <= n
}

// record returns the record of type id, which may be the base's.
func (m *Module) record(id uint32) (record, error) {
	if id < m.firstID {
		if m.base == nil {
			return record{}, m.errorf("no type %d", id)
		}
		return m.base.record(id)
	}
	i := id - m.firstID
	if i >= m.count {
		return record{}, m.errorf("no type %d: the last is %d", id, m.firstID+m.count-1)
	}
	off, ok := m.offset(i)
	if !ok {
		return record{}, m.errorf("type %d is past the end of the type section", id)
	}
	b := m.types[off:]
	r := record{
		nameOff:    binary.LittleEndian.Uint32(b),
		info:       binary.LittleEndian.Uint32(b[4:]),
		sizeOrType: binary.LittleEndian.Uint32(b[8:]),
	}
	if end := recordLen(r.info); end <= uint64(len(b)) {
		r.trailer = b[recordSize:end]
		return r, nil
	}
	return record{}, m.errorf("type %d runs past the end of the type section", id)
}

// records yields the ID, offset and info word of each record in turn
// that record finds, walking from each offset in the index as it does:
// the tables built from them then agree with record even on a foreign
// cache file's index.
func (m *Module) records() iter.Seq2[uint32, recordAt] {
	return func(yield func(uint32, recordAt) bool) {
		t := m.types
		n := uint64(len(t))
		for j, off := range m.offs {
			at := recordAt{off: uint64(off)}
			for i := uint32(j) * stride; i < min(uint32(j+1)*stride, m.count); i++ {
				if at.off+recordSize > n {
					break
				}
				at.info = binary.LittleEndian.Uint32(t[at.off+4:])
				next := at.off + recordLen(at.info)
				if next <= n && !yield(m.firstID+i, at) {
					return
				}
				at.off = next
			}
		}
	}
}

// A recordAt is where a record is and its info word, which says its
// kind and length.
type recordAt struct {
	off  uint64
	info uint32
}

func (r recordAt) kind() uint32 { return r.info >> 24 & 0x1f }

// strAt returns the string at off, which may be in the base's section.
func (m *Module) strAt(off uint32) ([]byte, bool) {
	if off < m.strBase {
		return m.base.strAt(off)
	}
	off -= m.strBase
	if uint64(off) >= uint64(len(m.strs)) {
		return nil, false
	}
	s := m.strs[off:]
	return s[:bytes.IndexByte(s, 0)], true // the section ends in NUL
}

// nameAt returns the string at off as a name, copied so that types keep
// no reference to the file's bytes.
func (m *Module) nameAt(off uint32) (string, error) {
	s, ok := m.strAt(off)
	if !ok {
		return "", m.errorf("string offset %d outside the string section", off)
	}
	return string(s), nil
}

// The name tables, built when first needed: most programs look up a
// few types and no functions, and hashing the kernel's 56,000 function
// names would cost them more than all their lookups.
const (
	typeTable = iota // INT, FLOAT, TYPEDEF, STRUCT, UNION, FWD, ENUM, ENUM64
	funcTable        // FUNC
	varTable         // VAR
	enumTable        // the enumerators of ENUM and ENUM64, by index in Module.enums
	numTables
)

var tableKinds = [numTables]uint32{
	typeTable: 1<<kindInt | 1<<kindFloat | 1<<kindTypedef | 1<<kindStruct | 1<<kindUnion |
		1<<kindFwd | 1<<kindEnum | 1<<kindEnum64,
	funcTable: 1 << kindFunc,
	varTable:  1 << kindVar,
	enumTable: 1<<kindEnum | 1<<kindEnum64,
}

// An enumRef is an enumerator: the ID of its enum and its index there.
type enumRef struct{ id, i uint32 }

// table returns the name table which, building it on first use. The
// caller holds m.mu and has indexed m.
func (m *Module) table(which int) *table {
	if t := m.names[which]; t != nil {
		return t
	}
	t := newTable(m.sizes[which])
	m.names[which] = t
	add := func(nameOff, ref uint32) {
		if s, ok := m.strAt(nameOff); ok && nameOff != 0 {
			t.add(nameHash(s), ref)
		}
	}
	if which == typeTable {
		// Walked: m.named holds the names.
		for _, r := range m.named {
			add(r.nameOff, r.id)
		}
		return t
	}
	if which == enumTable {
		m.enums = make([]enumRef, 0, m.sizes[enumTable])
	}
	mask := tableKinds[which]
	for id, r := range m.records() {
		k := r.kind()
		if mask>>k&1 == 0 {
			continue
		}
		if which != enumTable {
			add(binary.LittleEndian.Uint32(m.types[r.off:]), id)
			continue
		}
		item := uint64(trailerItem[k])
		for j := range r.info & 0xffff {
			add(binary.LittleEndian.Uint32(m.types[r.off+recordSize+uint64(j)*item:]), uint32(len(m.enums)))
			m.enums = append(m.enums, enumRef{id, j})
		}
	}
	return t
}

// lookup yields the references in table which whose name is name, in
// the order they were added, or an error where a reference's record
// cannot be read, which only a foreign cache file's index can cause.
func (m *Module) lookup(which int, name string) iter.Seq2[uint32, error] {
	t := m.table(which)
	return func(yield func(uint32, error) bool) {
		for ref := range t.probe(nameHash(name)) {
			id := ref
			if which == enumTable {
				id = m.enums[ref].id
			}
			r, err := m.record(id)
			if err != nil {
				yield(ref, err)
				return
			}
			off := r.nameOff
			if which == enumTable {
				// records found the enum's record, and it as long.
				off = r.word(int(m.enums[ref].i * trailerItem[r.kind()] / 4))
			}
			if s, _ := m.strAt(off); string(s) == name && !yield(ref, nil) {
				return
			}
		}
	}
}

// nameHash is the name tables' hash, FNV-1a: a table kept in the
// cache must hash alike in every process, which rules out maphash's
// random seeds.
func nameHash[S ~string | ~[]byte](s S) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// A table maps name hashes to references (type IDs or enumerator
// indexes), by open addressing with linear probing. Slots hold only the
// reference, plus one, so that the table stays small: its build, a
// random write per name, is bound by cache misses, while a lookup
// compares the few names on its probe sequence.
type table struct {
	slots []uint32
	mask  uint32
}

// newTable returns a table for n references, at most half full.
func newTable(n uint32) *table {
	size := uint32(1) << bits.Len32(2*n)
	return &table{slots: make([]uint32, size), mask: size - 1}
}

func (t *table) add(h uint64, ref uint32) {
	i := uint32(h) & t.mask
	for t.slots[i] != 0 {
		i = (i + 1) & t.mask
	}
	t.slots[i] = ref + 1
}

// probe yields the references on the probe sequence of hash h: those
// added under h, in the order added, among others. The sequence ends at
// an empty slot, or after every slot in a table a foreign cache file
// filled.
func (t *table) probe(h uint64) iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		i := uint32(h) & t.mask
		for range t.slots {
			if t.slots[i] == 0 {
				return
			}
			if !yield(t.slots[i] - 1) {
				return
			}
			i = (i + 1) & t.mask
		}
	}
}
