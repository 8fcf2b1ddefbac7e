package btf

import (
	"encoding/binary"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/cachefile"
)

// FuzzOpen reads raw BTF, as base BTF and as split BTF extending
// kinds(), looks up every name in it and converts its types, which must
// give an error or a type whose methods return, never a panic or a hang.
func FuzzOpen(f *testing.F) {
	for _, bo := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		f.Add(kinds().bytes(bo))
	}
	b := newBuilder()
	b.typedef("loop", b.next)
	b.struct_(kindStruct, "self", 4, false, field{"s", b.next, 0})
	f.Add(b.bytes(binary.LittleEndian))
	s := kinds().split()
	s.struct_(kindStruct, "mod", 8, false, field{"next", 1, 0}, field{"list", 11, 64})
	f.Add(s.bytes(binary.LittleEndian))

	base, err := newModule("base", KernelModule, kinds().bytes(binary.LittleEndian), nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, base := range []*Module{nil, base} {
			if m, err := newModule("fuzz", "fuzz", data, base); err == nil {
				exercise(t, m)
			}
		}
	})
}

func exercise(t *testing.T, m *Module) {
	if err := m.index(); err != nil {
		return
	}
	// A conversion costs at most the types it reaches, but one per type
	// would make large inputs quadratic.
	for i := range min(m.count, 256) {
		id := m.firstID + uint32(i)
		r, _ := m.record(id)
		s, _ := m.strAt(r.nameOff)
		name := string(s)
		switch r.kind() {
		case kindStruct, kindFwd:
			m.LookupType("struct " + name)
			m.LookupType("union " + name)
		case kindUnion:
			m.LookupType("union " + name)
		case kindEnum, kindEnum64:
			m.LookupType("enum " + name)
			for j := range r.vlen() {
				s, _ := m.strAt(r.word(j * int(trailerItem[r.kind()]/4)))
				m.LookupEnumerator(string(s))
			}
		case kindFunc:
			m.LookupFunc(name)
		case kindVar:
			m.LookupVar(name)
		default:
			m.LookupType(name)
		}

		m.mu.Lock()
		typ, err := m.typeByID(id)
		again, _ := m.typeByID(id)
		m.mu.Unlock()
		if err != nil {
			continue
		}
		if again != typ {
			t.Fatalf("type %d converted twice gives %v and %v", id, typ, again)
		}
		_ = typ.String()
		typ.Size()
		typ.Align()
		types.IsComplete(typ)
		if s, ok := types.Resolve(typ).(*types.Struct); ok {
			s.Member("no such member")
		}
		reach(typ, make(map[types.Type]bool), 1024)
	}
}

// reach visits the types t refers to, up to budget of them, loading the
// members of every struct met, also behind pointers, and calling the
// methods of each type. It returns what is left of budget.
func reach(t types.Type, seen map[types.Type]bool, budget int) int {
	if budget <= 0 || seen[t] {
		return budget
	}
	seen[t] = true
	budget--
	_ = t.String()
	t.Size()
	t.Align()
	switch u := t.(type) {
	case *types.Pointer:
		budget = reach(u.Elem, seen, budget)
	case *types.Array:
		budget = reach(u.Elem, seen, budget)
	case *types.Typedef:
		budget = reach(u.Type, seen, budget)
	case *types.Qualified:
		budget = reach(u.Type, seen, budget)
	case *types.Func:
		budget = reach(u.Result, seen, budget)
		for _, p := range u.Params {
			budget = reach(p, seen, budget)
		}
	case *types.Struct:
		for _, m := range u.Members() {
			budget = reach(m.Type, seen, budget)
		}
		u.Err()
	}
	return budget
}

// FuzzIndexCache reads cache files whose checksum holds, as a foreign
// file's may, for the BTF of many(): the index it holds is used or
// refused, and lookups through it give an error or a type, never a
// panic or a hang.
func FuzzIndexCache(f *testing.F) {
	data := many().bytes(binary.LittleEndian)
	walked, err := newModule("walked", KernelModule, data, nil)
	if err != nil {
		f.Fatal(err)
	}
	if err := walked.index(); err != nil {
		f.Fatal(err)
	}
	walked.mu.Lock()
	file := walked.encodeIndex()
	walked.mu.Unlock()
	if m, _ := newModule("cached", KernelModule, data, nil); !m.decodeIndex(file) {
		f.Fatal("the walked index's cache file is refused")
	}
	f.Add(file[:len(file)-4]) // less the checksum, which the fuzz function adds
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := newModule("cached", KernelModule, data, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := cachefile.Encoder{B: append([]byte(nil), body...)}
		e.Seal()
		m.mu.Lock()
		m.indexed = m.decodeIndex(e.B)
		m.mu.Unlock()
		exercise(t, m)
		for _, name := range []string{"struct s0", "e1", "E7_0", "f2", "v3", "t4", "i5", "int", "struct task"} {
			m.LookupType(name)
			m.LookupFunc(name)
			m.LookupVar(name)
			m.VarSection(name)
			m.LookupEnumerator(name)
		}
	})
}
