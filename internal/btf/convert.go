package btf

import (
	"strings"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// A converter turns records into types, each ID once, so that an ID
// always gives the same Go pointer. A type is memoised before its parts
// are converted, which ends the recursion of types that refer to
// themselves (struct list_head's next), and each conversion is then
// checked for cycles that C cannot write: see checkCycles. A struct's
// members are converted only when they are first asked for (see
// loadMembers), so a conversion stops at structs.
type converter struct {
	index   []uint32               // by ID - firstID: 1 + the type's place in done, or 0
	done    [][]types.Type         // the types converted, in order, in chunks that never move
	n       uint32                 // the number of types in done
	start   uint32                 // n when the current conversion began
	journal []entry                // the types memoised by the current conversion, as in done
	depth   int                    // the depth of convert's recursion
	chain   []int                  // scratch for checkCycles
	pieces  [][]byte               // scratch for joinNames
	loading map[*types.Struct]bool // the structs whose members are being loaded

	// Slabs: the kernel's task_struct alone brings in 6,000 types, and
	// allocating them a chunk at a time saves two allocations in three.
	ptrs    slab[types.Pointer]
	structs slab[types.Struct]
	funcs   slab[types.Func]
	members slab[types.Member]
	params  slab[types.Type]
}

// A slab hands out Ts from chunks.
type slab[T any] struct{ free []T }

func (s *slab[T]) new() *T { return &s.slice(1)[0] }

// slice returns n Ts, which no later slice shares.
func (s *slab[T]) slice(n int) []T {
	const chunk = 256
	if n > chunk/4 {
		return make([]T, n)
	}
	if n > len(s.free) {
		s.free = make([]T, chunk)
	}
	t := s.free[:n:n]
	s.free = s.free[n:]
	return t
}

// done's chunks hold 1<<chunkBits types each.
const chunkBits = 10

// An entry is a type memoised by the current conversion, as
// checkCycles needs it: its ID and kind; the one type it refers to (an
// element, target or result); the checks to which that type matters;
// and its states.
type entry struct {
	id, next           uint32
	kind, edges, state uint8
}

// The checks to which a reference to a type matters: the type can
// contain others by value, or derive from another as String follows it.
const (
	valueEdge = 1 << iota
	derivEdge
)

// edges returns the checks to which a reference to t matters.
func edges(t types.Type) uint8 {
	switch t.(type) {
	case *types.Struct, *types.Typedef:
		return valueEdge
	case *types.Qualified, *types.Array:
		return valueEdge | derivEdge
	case *types.Pointer, *types.Func:
		return derivEdge
	}
	return 0
}

// maxDepth bounds the recursion, which a crafted file could otherwise
// take past the goroutine stack's limit; converting every type of a
// kernel goes a few hundred deep.
const maxDepth = 1 << 14

// typeByID returns the type with the given ID. The caller holds m.mu.
// A failed conversion leaves nothing half-built behind.
func (m *Module) typeByID(id uint32) (types.Type, error) {
	if id != 0 && id < m.firstID {
		m.base.mu.Lock()
		defer m.base.mu.Unlock()
		return m.base.typeByID(id)
	}
	var t types.Type
	err := m.transaction(func() (err error) {
		t, err = m.convert(id)
		return err
	})
	return t, err
}

// transaction runs conv, a conversion, and checks the types it made for
// cycles. If either fails, the types it made are forgotten. The caller
// holds m.mu.
func (m *Module) transaction(conv func() error) error {
	c := &m.conv
	if c.index == nil {
		// A slice rather than a map: lookups by ID are the
		// converter's commonest step, and 4 bytes a type is cheap.
		c.index = make([]uint32, m.count)
	}
	c.journal, c.start = c.journal[:0], c.n
	err := conv()
	if err == nil {
		err = m.checkCycles()
	}
	if err != nil {
		for _, e := range c.journal {
			c.index[e.id-m.firstID] = 0
		}
		for ; c.n > c.start; c.n-- {
			c.done[(c.n-1)>>chunkBits][(c.n-1)&(1<<chunkBits-1)] = nil
		}
		c.depth = 0
	}
	return err
}

// memoize records t as the type with the given ID, record r, and
// returns its place in the journal.
func (m *Module) memoize(id uint32, r record, t types.Type) int {
	c := &m.conv
	if c.n>>chunkBits == uint32(len(c.done)) {
		c.done = append(c.done, make([]types.Type, 1<<chunkBits))
	}
	c.done[c.n>>chunkBits][c.n&(1<<chunkBits-1)] = t
	c.n++
	c.index[id-m.firstID] = c.n
	c.journal = append(c.journal, entry{id: id, kind: uint8(r.kind())})
	return len(c.journal) - 1
}

// refer notes in the journal's entry j that its type refers to type id,
// which converted to t.
func (m *Module) refer(j int, id uint32, t types.Type) {
	e := &m.conv.journal[j]
	e.next, e.edges = id, edges(t)
}

func (m *Module) convert(id uint32) (types.Type, error) {
	if id == 0 {
		return types.Void{}, nil
	}
	if id < m.firstID {
		if m.base == nil {
			return nil, m.errorf("no type %d", id)
		}
		m.base.mu.Lock()
		defer m.base.mu.Unlock()
		return m.base.typeByID(id)
	}
	c := &m.conv
	if i := uint64(id - m.firstID); i < uint64(len(c.index)) && c.index[i] != 0 {
		p := c.index[i] - 1
		return c.done[p>>chunkBits][p&(1<<chunkBits-1)], nil
	}
	if c.depth >= maxDepth {
		return nil, m.errorf("type %d: types nested more than %d deep", id, maxDepth)
	}
	c.depth++
	t, err := m.build(id)
	c.depth--
	return t, err
}

// build converts the record of type id, which is not yet memoised.
func (m *Module) build(id uint32) (types.Type, error) {
	r, err := m.record(id)
	if err != nil {
		return nil, err
	}
	var name string
	if k := r.kind(); k != kindEnum && k != kindEnum64 {
		if name, err = m.nameAt(r.nameOff); err != nil {
			return nil, err
		}
	}
	switch k := r.kind(); k {
	case kindInt:
		enc := r.word(0)
		t := &types.Int{
			Name:   name,
			Bytes:  int64(r.sizeOrType),
			Signed: enc>>24&intSigned != 0,
			Char:   enc>>24&intChar != 0 || r.sizeOrType == 1 && isCharName(name),
			Bool:   enc>>24&intBool != 0,
		}
		m.memoize(id, r, t)
		return t, nil

	case kindFloat:
		t := &types.Float{Name: name, Bytes: int64(r.sizeOrType)}
		m.memoize(id, r, t)
		return t, nil

	case kindFwd:
		t := &types.Struct{Module: m.name, Name: name, Union: r.kflag(), Incomplete: true}
		m.memoize(id, r, t)
		return t, nil

	case kindEnum, kindEnum64:
		t := &types.Enum{Module: m.name, Bytes: int64(r.sizeOrType), Incomplete: r.vlen() == 0}
		if err := m.enumerators(r, t); err != nil {
			return nil, err
		}
		m.memoize(id, r, t)
		return t, nil

	case kindPtr:
		t := m.conv.ptrs.new()
		j := m.memoize(id, r, t)
		t.Elem, err = m.convert(r.typeID())
		m.refer(j, r.typeID(), t.Elem)
		return t, err

	case kindArray:
		t := &types.Array{Len: int64(r.word(2))}
		j := m.memoize(id, r, t)
		t.Elem, err = m.convert(r.word(0))
		m.refer(j, r.word(0), t.Elem)
		return t, err

	case kindStruct, kindUnion:
		t := m.conv.structs.new()
		*t = types.Struct{Module: m.name, Name: name, Union: k == kindUnion, Bytes: int64(r.sizeOrType)}
		m.memoize(id, r, t)
		if r.vlen() > 0 {
			t.LoadMembers(func() ([]types.Member, error) { return m.loadMembers(id, t) })
		}
		return t, nil

	case kindTypedef:
		t := &types.Typedef{Module: m.name, Name: name}
		j := m.memoize(id, r, t)
		t.Type, err = m.convert(r.typeID())
		m.refer(j, r.typeID(), t.Type)
		return t, err

	case kindConst, kindVolatile, kindRestrict:
		t := &types.Qualified{Qual: qualOf[k]}
		j := m.memoize(id, r, t)
		t.Type, err = m.convert(r.typeID())
		m.refer(j, r.typeID(), t.Type)
		return t, err

	case kindFuncProto:
		t := m.conv.funcs.new()
		j := m.memoize(id, r, t)
		if err := m.params(r, t); err != nil {
			return nil, err
		}
		m.refer(j, r.typeID(), t.Result)
		return t, nil

	case kindTypeTag:
		// A tag such as __rcu or __user annotates the type it names,
		// which D sees instead. The tag is memoised only once that
		// type is converted, so a chain of tags is followed here
		// rather than by recursion, which a loop of tags would not
		// end.
		target := r.typeID()
		for n := 0; target != 0; n++ {
			tr, err := m.record(target)
			if err != nil {
				return nil, err
			}
			if tr.kind() != kindTypeTag {
				break
			}
			if n > int(m.count) {
				return nil, m.errorf("type %d refers to itself through type tags", id)
			}
			target = tr.typeID()
		}
		t, err := m.convert(target)
		if err != nil {
			return nil, err
		}
		m.refer(m.memoize(id, r, t), target, t)
		return t, nil
	}
	return nil, m.errorf("type %d: %s is not a type", id, kindName(r.kind()))
}

var qualOf = [numKinds]types.Qual{kindConst: types.Const, kindVolatile: types.Volatile, kindRestrict: types.Restrict}

// Cycles. Those that C can write pass through a struct or union and
// through a pointer or function type. The types package's methods
// assume so: Size and Align follow typedefs, qualifiers, arrays and a
// struct's members; String follows pointers, arrays, qualifiers and a
// function's result. checkCycles looks for a cycle along either set of
// edges among the types of the current conversion, which ends at
// structs: a cycle through an older type would have been found when
// that type was converted, as every type an older one reaches is older
// too. A cycle through a struct's members is loadMembers' to find.

// The states of a type in the journal.
const (
	valueOpen = 1 << iota // on checkValue's path
	valueDone             // in no value cycle
	derivOpen             // on checkDeriv's chain
	derivDone             // in no cycle that String follows
)

func (m *Module) checkCycles() error {
	for j := range m.conv.journal {
		if err := m.checkValue(j); err != nil {
			return err
		}
		if err := m.checkDeriv(j); err != nil {
			return err
		}
	}
	return nil
}

// entry returns the place in the journal of type id, or false if the
// current conversion did not make it: void, the base's types and those
// of earlier conversions had their check.
func (m *Module) entry(id uint32) (int, bool) {
	c := &m.conv
	if id < m.firstID || uint64(id-m.firstID) >= uint64(len(c.index)) {
		return 0, false
	}
	v := c.index[id-m.firstID]
	if v <= c.start {
		return 0, false
	}
	return int(v - 1 - c.start), true
}

// checkDeriv follows, from the type at j in the journal, the chain of
// types that String follows: a pointer's, array's or qualifier's element
// and a function's result.
func (m *Module) checkDeriv(j int) error {
	c := &m.conv
	c.chain = c.chain[:0]
	for ok := true; ok && c.journal[j].state&derivDone == 0; {
		e := &c.journal[j]
		if e.state&derivOpen != 0 {
			return m.errorf("type %d refers to itself other than through a struct", e.id)
		}
		e.state |= derivOpen
		c.chain = append(c.chain, j)
		if e.kind == kindTypedef || e.edges&derivEdge == 0 {
			break
		}
		j, ok = m.entry(e.next)
	}
	for _, j := range c.chain {
		c.journal[j].state = c.journal[j].state&^derivOpen | derivDone
	}
	return nil
}

// checkValue follows, from the type at j in the journal, the chain of
// types that Size and Align follow: a typedef's or qualifier's type and
// an array's element. The chain ends at a struct, whose members
// loadMembers checks when it converts them.
func (m *Module) checkValue(j int) error {
	c := &m.conv
	c.chain = c.chain[:0]
	for ok := true; ok && c.journal[j].state&valueDone == 0; {
		e := &c.journal[j]
		if e.state&valueOpen != 0 {
			return m.errorf("type %d contains itself", e.id)
		}
		e.state |= valueOpen
		c.chain = append(c.chain, j)
		if !containsValues[e.kind] || e.edges&valueEdge == 0 {
			break
		}
		j, ok = m.entry(e.next)
	}
	for _, j := range c.chain {
		c.journal[j].state = c.journal[j].state&^valueOpen | valueDone
	}
	return nil
}

// containsValues tells the kinds whose one referred type a value of
// theirs contains.
var containsValues = [numKinds]bool{
	kindTypedef: true, kindConst: true, kindVolatile: true, kindRestrict: true,
	kindTypeTag: true, kindArray: true,
}

// loadMembers converts the members of struct or union t, type id, the
// first time they are asked for. It then checks that t does not contain
// itself: it loads each struct a member holds by value (through
// typedefs, qualifiers and arrays), whose own loading checks its members
// in turn, so a struct that is met again while its members are being
// loaded is one that contains itself. Types that C can write never do.
func (m *Module) loadMembers(id uint32, t *types.Struct) ([]types.Member, error) {
	m.mu.Lock()
	c := &m.conv
	if c.loading == nil {
		c.loading = make(map[*types.Struct]bool)
	}
	c.loading[t] = true
	var ms []types.Member
	err := m.transaction(func() (err error) {
		ms, err = m.members(id)
		return err
	})
	m.mu.Unlock()
	if err == nil {
		err = m.checkContained(id, ms)
	}
	m.mu.Lock()
	delete(c.loading, t)
	m.mu.Unlock()
	return ms, err
}

// checkContained loads the structs that ms, the members of type id,
// hold by value, and fails if one is being loaded already.
func (m *Module) checkContained(id uint32, ms []types.Member) error {
	for _, mb := range ms {
		s := valueStruct(mb.Type)
		if s == nil {
			continue
		}
		m.mu.Lock()
		again := m.conv.loading[s]
		m.mu.Unlock()
		if again {
			return m.errorf("type %d contains itself", id)
		}
		if err := s.Err(); err != nil {
			return err
		}
	}
	return nil
}

// valueStruct returns the struct or union that a value of type t is or
// holds, through typedefs, qualifiers and arrays, or nil. The chain was
// checked for cycles when it was converted.
func valueStruct(t types.Type) *types.Struct {
	for range 64 {
		switch u := t.(type) {
		case *types.Typedef:
			t = u.Type
		case *types.Qualified:
			t = u.Type
		case *types.Array:
			t = u.Elem
		case *types.Struct:
			return u
		default:
			return nil
		}
	}
	return nil
}

// members converts the members of the struct or union of type id. The
// caller holds m.mu.
func (m *Module) members(id uint32) ([]types.Member, error) {
	r, err := m.record(id)
	if err != nil {
		return nil, err
	}
	n := r.vlen()
	ms := m.conv.members.slice(n)
	err = m.joinNames(n, func(i int) uint32 { return r.word(3 * i) }, func(i int, name string) { ms[i].Name = name })
	if err != nil {
		return nil, err
	}
	for i := range ms {
		typ, off := r.word(3*i+1), r.word(3*i+2)
		mt, err := m.convert(typ)
		if err != nil {
			return nil, err
		}
		ms[i].Type, ms[i].Offset = mt, int64(off)
		if r.kflag() {
			// The offset's top byte is the bit-field's width.
			ms[i].Offset, ms[i].BitSize = int64(off&0xffffff), int64(off>>24)
		} else if m.narrowInts || m.base != nil && m.base.narrowInts {
			if bitOff, width, ok := m.legacyBitfield(typ); ok {
				ms[i].Offset += bitOff
				ms[i].BitSize = width
			}
		}
	}
	return ms, nil
}

// joinNames calls set with the n names at offsets off(0) … off(n-1),
// copied into one string to save an allocation per name.
func (m *Module) joinNames(n int, off func(int) uint32, set func(int, string)) error {
	c := &m.conv
	c.pieces = c.pieces[:0]
	size := 0
	for i := range n {
		o := off(i)
		s, ok := m.strAt(o)
		if !ok {
			return m.errorf("string offset %d outside the string section", o)
		}
		c.pieces = append(c.pieces, s)
		size += len(s)
	}
	var b strings.Builder
	b.Grow(size)
	for _, s := range c.pieces {
		b.Write(s)
	}
	all := b.String()
	for i, s := range c.pieces {
		set(i, all[:len(s)])
		all = all[len(s):]
	}
	return nil
}

// legacyBitfield reports whether a member of type id, in a struct
// without kind_flag, is a bit-field: its type resolves through typedefs
// and qualifiers, as the kernel's verifier resolves it, to an INT whose
// encoding narrows or shifts it. It returns the shift and the width.
func (m *Module) legacyBitfield(id uint32) (bitOff, width int64, ok bool) {
	for range 32 {
		r, err := m.record(id)
		if err != nil {
			return 0, 0, false
		}
		switch r.kind() {
		case kindTypedef, kindConst, kindVolatile, kindRestrict, kindTypeTag:
			id = r.typeID()
			continue
		case kindInt:
			enc := r.word(0)
			bits, shift := enc&0xff, enc>>16&0xff
			if shift == 0 && bits == 8*r.sizeOrType {
				return 0, 0, false
			}
			return int64(shift), int64(bits), true
		}
		return 0, 0, false
	}
	return 0, 0, false
}

// enumerators fills in the name and values of enum t, record r: signed
// when kind_flag says so, else unsigned.
func (m *Module) enumerators(r record, t *types.Enum) error {
	n, stride := r.vlen(), 2
	if r.kind() == kindEnum64 {
		stride = 3
	}
	if n > 0 {
		t.Values = make([]types.Enumerator, n)
	}
	for i := range t.Values {
		v := int64(r.word(stride*i + 1))
		if r.kind() == kindEnum64 {
			v |= int64(r.word(stride*i+2)) << 32
		} else if r.kflag() {
			v = int64(int32(v))
		}
		t.Values[i].Value = v
	}
	return m.joinNames(n+1, func(i int) uint32 {
		if i == 0 {
			return r.nameOff
		}
		return r.word(stride * (i - 1))
	}, func(i int, name string) {
		if i == 0 {
			t.Name = name
		} else {
			t.Values[i-1].Name = name
		}
	})
}

// params fills in the result and parameters of function type t, record
// r. A last parameter with no name and type void marks a variadic
// function.
func (m *Module) params(r record, t *types.Func) error {
	res, err := m.convert(r.typeID())
	if err != nil {
		return err
	}
	t.Result = res
	n := r.vlen()
	if n > 0 && r.word(2*(n-1)) == 0 && r.word(2*(n-1)+1) == 0 {
		t.Variadic = true
		n--
	}
	if n == 0 {
		return nil
	}
	t.Params = m.conv.params.slice(n)
	for i := range t.Params {
		typ := r.word(2*i + 1)
		if typ == 0 {
			return m.errorf("parameter %d of a function type is void", i+1)
		}
		if t.Params[i], err = m.convert(typ); err != nil {
			return err
		}
	}
	return nil
}

// isCharName reports whether an INT's name is one of C's character
// types. Compilers do not set BTF's CHAR encoding, but D prints arrays
// of char as strings.
func isCharName(name string) bool {
	return name == "char" || name == "signed char" || name == "unsigned char"
}
