package btf

import (
	"slices"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// LookupType returns the type called name: "struct task_struct",
// "union u", "enum e", a typedef such as "pid_t", or an integer or
// floating-point type. Integer types keep BTF's names ("long unsigned
// int" from gcc), which D's messages print as dtrace on Linux does, but
// are found by C's other spellings too ("unsigned long"). When several
// types have the name, a definition is preferred to a forward
// declaration, and then the first. A module's lookup falls back on its
// base, as a module's C code sees the kernel's types. LookupType
// returns nil when there is no such type, and an *Error when the BTF is
// malformed.
func (m *Module) LookupType(name string) (types.Type, error) {
	q, ok := parseTypeName(name)
	if !ok {
		return nil, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, _, err := m.lookupType(q)
	return t, err
}

// lookupType finds q here or, when the module has only a forward
// declaration or nothing, in its base. The caller holds m.mu.
func (m *Module) lookupType(q typeQuery) (t types.Type, complete bool, err error) {
	if err := m.indexLocked(); err != nil {
		return nil, false, err
	}
	id, complete, err := m.findType(q)
	if err != nil {
		return nil, false, err
	}
	if !complete && m.base != nil {
		m.base.mu.Lock()
		bt, bcomplete, err := m.base.lookupType(q)
		m.base.mu.Unlock()
		if err != nil || bcomplete || id == 0 {
			return bt, bcomplete, err
		}
	}
	if id == 0 {
		return nil, false, nil
	}
	t, err = m.typeByID(id)
	return t, complete, err
}

// findType returns the ID of the first complete type matching q, else
// of the first incomplete one, else 0.
func (m *Module) findType(q typeQuery) (id uint32, complete bool, err error) {
	for _, name := range q.names {
		for ref, err := range m.lookup(typeTable, name) {
			if err != nil {
				return 0, false, err
			}
			r, _ := m.record(ref) // lookup read it
			ok, full := q.matches(r)
			if ok && full {
				return ref, true, nil
			}
			if ok && id == 0 {
				id = ref
			}
		}
	}
	return id, false, nil
}

// A typeQuery is a parsed type name: the kinds it may name and the
// names to try, in order.
type typeQuery struct {
	tag   string // "struct", "union", "enum", or "" for other names
	isInt bool   // the name is an integer type's, in one of C's spellings
	names []string
}

// matches reports whether record r is a type q names, and whether it
// is complete rather than a forward declaration.
func (q typeQuery) matches(r record) (ok, complete bool) {
	k := r.kind()
	switch q.tag {
	case "struct":
		return k == kindStruct || k == kindFwd && !r.kflag(), k == kindStruct
	case "union":
		return k == kindUnion || k == kindFwd && r.kflag(), k == kindUnion
	case "enum":
		ok := k == kindEnum || k == kindEnum64
		return ok, ok && r.vlen() > 0
	}
	if q.isInt {
		return k == kindInt, true
	}
	return k == kindTypedef || k == kindInt || k == kindFloat, true
}

func parseTypeName(name string) (typeQuery, bool) {
	w := strings.Fields(name)
	switch {
	case len(w) == 2 && (w[0] == "struct" || w[0] == "union" || w[0] == "enum"):
		return typeQuery{tag: w[0], names: w[1:]}, true
	case len(w) == 0:
		return typeQuery{}, false
	}
	if alt, ok := types.IntSpellings(w); ok {
		return typeQuery{isInt: true, names: alt}, true
	}
	return typeQuery{names: []string{strings.Join(w, " ")}}, true
}

// LookupEnumerator returns the enum that has an enumerator called name,
// and its value, searching the base after the module.
func (m *Module) LookupEnumerator(name string) (*types.Enum, int64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.indexLocked() == nil {
		for ref, err := range m.lookup(enumTable, name) {
			if err != nil {
				break
			}
			e := m.enums[ref]
			t, err := m.typeByID(e.id)
			if err != nil {
				break
			}
			en := t.(*types.Enum)
			return en, en.Values[e.i].Value, true
		}
	}
	if m.base != nil {
		return m.base.LookupEnumerator(name)
	}
	return nil, 0, false
}

// LookupFunc returns the type of the function called name and the names
// of its parameters ("" where BTF has none), or nil if the module has no
// such function. It does not search the base: a function belongs to
// one module.
func (m *Module) LookupFunc(name string) (*types.Func, []string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.indexLocked(); err != nil {
		return nil, nil, err
	}
	for id, err := range m.lookup(funcTable, name) {
		if err != nil {
			return nil, nil, err
		}
		fn, _ := m.record(id) // lookup read it
		proto, err := m.record(fn.typeID())
		if err != nil {
			return nil, nil, err
		}
		if proto.kind() != kindFuncProto {
			return nil, nil, m.errorf("function %s (type %d): type %d is a %s, not a FUNC_PROTO", name, id, fn.typeID(), kindName(proto.kind()))
		}
		t, err := m.typeByID(fn.typeID())
		if err != nil {
			return nil, nil, err
		}
		f := t.(*types.Func)
		names := make([]string, len(f.Params))
		for i := range names {
			if names[i], err = m.nameAt(proto.word(2 * i)); err != nil {
				return nil, nil, err
			}
		}
		return f, names, nil
	}
	return nil, nil, nil
}

// LookupVar returns the type of the variable called name, or nil if the
// module has none. The kernel's BTF describes its per-CPU variables.
// LookupVar does not search the base.
func (m *Module) LookupVar(name string) (types.Type, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.indexLocked(); err != nil {
		return nil, err
	}
	for id, err := range m.lookup(varTable, name) {
		if err != nil {
			return nil, err
		}
		v, _ := m.record(id) // lookup read it
		return m.typeByID(v.typeID())
	}
	return nil, nil
}

// VarSection returns the name of the data section (DATASEC) that holds
// the variable called name, ".data..percpu" for the kernel's per-CPU
// variables, and the variable's offset in it; "" when the module has no
// such variable or no section lists it. It does not search the base.
func (m *Module) VarSection(name string) (string, uint32, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.indexLocked(); err != nil {
		return "", 0, err
	}
	var ids []uint32
	for id, err := range m.lookup(varTable, name) {
		if err != nil {
			return "", 0, err
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return "", 0, nil
	}
	for id, at := range m.records() {
		if at.kind() != kindDatasec {
			continue // the few DATASECs are found without decoding the rest
		}
		r, err := m.record(id)
		if err != nil {
			return "", 0, err
		}
		// Each entry: the VAR's type ID, its offset, its size.
		for j := range r.vlen() {
			if v := r.word(3 * j); slices.Contains(ids, v) {
				sec, err := m.nameAt(r.nameOff)
				return sec, r.word(3*j + 1), err
			}
		}
	}
	return "", 0, nil
}
