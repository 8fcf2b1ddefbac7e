package btf

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// denseOffsets returns the offset of every record in the type section
// t and, last, its end: the dense index the sparse one stands for,
// found as the kernel's BTF documentation describes the records rather
// than through the package's tables.
func denseOffsets(tb testing.TB, t []byte) []uint64 {
	tb.Helper()
	var offs []uint64
	off := uint64(0)
	for off < uint64(len(t)) {
		offs = append(offs, off)
		info := binary.LittleEndian.Uint32(t[off+4:])
		vlen := uint64(info & 0xffff)
		off += 12
		switch k := info >> 24 & 0x1f; k {
		case kindInt, kindVar, kindDeclTag:
			off += 4
		case kindArray:
			off += 12
		case kindStruct, kindUnion, kindDatasec, kindEnum64:
			off += 12 * vlen
		case kindEnum, kindFuncProto:
			off += 8 * vlen
		case kindPtr, kindFwd, kindTypedef, kindVolatile, kindConst, kindRestrict,
			kindFunc, kindFloat, kindTypeTag:
		default:
			tb.Fatalf("record at %d: kind %d", off, k)
		}
	}
	if off != uint64(len(t)) {
		tb.Fatalf("the last record runs to %d, past the type section's %d bytes", off, len(t))
	}
	return append(offs, off)
}

// many is kinds() and then records of every length, more than stride
// of them per kind, so that the index's offsets fall on each.
func many() *builder {
	b := kinds()
	int_ := uint32(1)
	var vars []uint32
	for i := range 5 * stride {
		switch i % 6 {
		case 0:
			var fs []field
			for j := range i % 5 {
				fs = append(fs, field{fmt.Sprintf("m%d", j), int_, uint32(32 * j)})
			}
			b.struct_(kindStruct, fmt.Sprintf("s%d", i), uint32(4*len(fs)), false, fs...)
		case 1:
			var tr []uint32
			for j := range i % 4 {
				tr = append(tr, b.str(fmt.Sprintf("E%d_%d", i, j)), uint32(j))
			}
			b.add(fmt.Sprintf("e%d", i), kindEnum, false, len(tr)/2, 4, tr...)
		case 2:
			b.add(fmt.Sprintf("f%d", i), kindFunc, false, 1, b.proto(int_, param{"a", int_}))
		case 3:
			vars = append(vars, b.add(fmt.Sprintf("v%d", i), kindVar, false, 0, int_, 1))
		case 4:
			b.typedef(fmt.Sprintf("t%d", i), b.array(int_, int_, uint32(i)))
		case 5:
			b.int(fmt.Sprintf("i%d", i), 8, 64)
		}
	}
	var tr []uint32
	for i, v := range vars {
		tr = append(tr, v, uint32(4*i), 4)
	}
	b.add(".bss", kindDatasec, false, len(vars), uint32(4*len(vars)), tr...)
	return b
}

// checkRecords compares the record of every ID of m with the record at
// its offset in the dense index, and checks the IDs either side.
func checkRecords(t *testing.T, m *Module) {
	t.Helper()
	dense := denseOffsets(t, m.types)
	n := uint32(len(dense) - 1)
	if m.count != n {
		t.Fatalf("%d records, want %d", m.count, n)
	}
	if want := (n + stride - 1) / stride; uint32(len(m.offs)) != want {
		t.Errorf("%d offsets for %d records, want %d", len(m.offs), n, want)
	}
	bad := 0
	for i := range n {
		id := m.firstID + i
		got, err := m.record(id)
		b := m.types[dense[i]:dense[i+1]]
		want := record{
			nameOff:    binary.LittleEndian.Uint32(b),
			info:       binary.LittleEndian.Uint32(b[4:]),
			sizeOrType: binary.LittleEndian.Uint32(b[8:]),
			trailer:    b[recordSize:],
		}
		if err != nil || !equalRecords(got, want) {
			if bad++; bad <= 10 {
				t.Errorf("type %d (the %dth of a stride): %+v, %v, want %+v", id, i%stride, got, err, want)
			}
		}
	}
	if bad > 10 {
		t.Errorf("... %d records differ in all", bad)
	}
	if _, err := m.record(m.firstID + n); err == nil || !strings.Contains(err.Error(), "no type") {
		t.Errorf("type %d, past the last: %v, want no type", m.firstID+n, err)
	}
	if m.base == nil {
		if _, err := m.record(m.firstID - 1); err == nil {
			t.Errorf("type %d, before the first: no error", m.firstID-1)
		}
	} else if got, err := m.record(m.firstID - 1); err != nil || got.info != mustRecord(t, m.base, m.firstID-1).info {
		t.Errorf("type %d, the base's last: %+v, %v", m.firstID-1, got, err)
	}
}

func equalRecords(a, b record) bool {
	return a.nameOff == b.nameOff && a.info == b.info && a.sizeOrType == b.sizeOrType &&
		string(a.trailer) == string(b.trailer)
}

func mustRecord(t *testing.T, m *Module, id uint32) record {
	t.Helper()
	r, err := m.record(id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRecords finds the record of every ID through the sparse index,
// walked and read from the cache, and compares it with the dense
// index's.
func TestRecords(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	base := kinds()
	split := base.split()
	for range 2 * stride {
		split.struct_(kindStruct, "mod", 8, false, field{"next", 1, 0}, field{"list", 11, 64})
	}
	tests := []struct {
		name string
		data []byte
		base []byte
	}{
		{"kinds", kinds().bytes(le), nil},
		{"kinds-big-endian", kinds().bytes(be), nil},
		{"many", many().bytes(le), nil},
		{"one", func() []byte { b := newBuilder(); b.int("int", 4, 32); return b.bytes(le) }(), nil},
		{"split", split.bytes(le), base.bytes(le)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b *Module
			if tt.base != nil {
				b = open(t, "base", tt.base, nil)
			}
			file := writeFile(t, "btf", tt.data)
			dir, _ := cacheDir(t)
			for _, run := range []string{"walked", "cached"} {
				m, err := Open(file, b)
				if err != nil {
					t.Fatal(err)
				}
				m.UseCache(dir, "k")
				if err := m.index(); err != nil {
					t.Fatal(err)
				}
				if cached(m) != (run == "cached") {
					t.Fatalf("%s: index from the cache %v", run, cached(m))
				}
				checkRecords(t, m)
			}
		})
	}
	t.Run("kernel", func(t *testing.T) {
		dir, _ := cacheDir(t)
		for _, run := range []string{"walked", "cached"} {
			m := kernel(t)
			m.UseCache(dir, "k")
			if err := m.index(); err != nil {
				t.Fatal(err)
			}
			if cached(m) != (run == "cached") {
				t.Fatalf("%s: index from the cache %v", run, cached(m))
			}
			checkRecords(t, m)
		}
	})
}

// TestForeignOffsets reads cache files whose checksum holds but whose
// index has a wrong offset: the records walked to from it are errors or
// some record, never a fault, and the others are right. Lookups of
// every name find the right types or report an error.
func TestForeignOffsets(t *testing.T) {
	data := many().bytes(binary.LittleEndian)
	file := writeFile(t, "vmlinux", data)
	plain := open(t, "plain", data, nil)
	if err := plain.index(); err != nil {
		t.Fatal(err)
	}
	names := allNames(t, plain)
	want := describe(plain, names)
	n := uint32(len(plain.types))
	const j = 2 // the wrong offset's
	tests := []struct {
		name     string
		off      uint32
		pastEnd  bool // every record walked to from off is past the end
		misfound bool // a record walked to from off may be another's
	}{
		{"end", n, true, false},
		{"last byte", n - 1, true, false},
		{"last word", n - 4, true, false},
		{"max", ^uint32(0), true, false},
		{"inside a record", plain.offs[j] + 4, false, true},
		{"another's", plain.offs[j-1], false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, _ := cacheDir(t)
			w, err := Open(file, nil)
			if err != nil {
				t.Fatal(err)
			}
			w.UseCache(dir, "k")
			w.mu.Lock()
			if err := w.walk(); err != nil {
				t.Fatal(err)
			}
			w.offs[j] = tt.off
			w.storeIndex()
			w.mu.Unlock()

			m, err := Open(file, nil)
			if err != nil {
				t.Fatal(err)
			}
			m.UseCache(dir, "k")
			if err := m.index(); err != nil || !cached(m) {
				t.Fatalf("the foreign file was not read: %v", err)
			}
			for i := range m.count {
				id := m.firstID + i
				got, err := m.record(id)
				if i/stride == j {
					if tt.pastEnd && (err == nil || !strings.Contains(err.Error(), "past the end")) {
						t.Errorf("type %d, walked to from offset %d: %v, want past the end", id, tt.off, err)
					}
					continue
				}
				if w := mustRecord(t, plain, id); err != nil || !equalRecords(got, w) {
					t.Errorf("type %d: %+v, %v, want %+v", id, got, err, w)
				}
			}
			got := describe(m, names)
			for i := range got {
				if got[i] != want[i] && !strings.Contains(got[i], "past the end") && !tt.misfound {
					t.Errorf("%s, want %s", got[i], want[i])
				}
			}
			for _, name := range names {
				m.LookupFunc(name)
				m.LookupVar(name)
				m.VarSection(name)
				m.LookupEnumerator(name)
			}
			exercise(t, m)
		})
	}
}

// allNames returns the names of every record of m, as LookupType would
// take those of types.
func allNames(t *testing.T, m *Module) []string {
	var names []string
	for i := range m.count {
		r := mustRecord(t, m, m.firstID+i)
		name, err := m.nameAt(r.nameOff)
		if err != nil || name == "" {
			continue
		}
		names = append(names, tagged(r, name))
	}
	return names
}

// TestDenseOffsets checks the test's own reference on a section whose
// offsets are known.
func TestDenseOffsets(t *testing.T) {
	b := newBuilder()
	b.int("int", 4, 32)                                                       // 16 bytes
	b.struct_(kindStruct, "s", 8, false, field{"a", 1, 0}, field{"b", 1, 32}) // 12 + 24
	b.ptr(1)                                                                  // 12
	m := open(t, "btf", b.bytes(binary.LittleEndian), nil)
	if diff := cmp.Diff([]uint64{0, 16, 52, 64}, denseOffsets(t, m.types)); diff != "" {
		t.Errorf("offsets (-want +got):\n%s", diff)
	}
}

// tagged returns the name of record r as D writes the type: with its
// tag's keyword for a struct, union or enum.
func tagged(r record, name string) string {
	switch r.kind() {
	case kindStruct:
		return "struct " + name
	case kindUnion:
		return "union " + name
	case kindEnum, kindEnum64:
		return "enum " + name
	}
	return name
}
