package types

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// A Table numbers types so that a record description can name one in a
// string, as dtrace's print() names the type of its value by its CTF
// container and identifier ("D`12"), which only the library that
// compiled the program can resolve. The compiler adds the type of each
// print() to the table and the consumer looks the references up in it.
// A Table is safe for concurrent use; the zero Table is empty.
type Table struct {
	mu    sync.Mutex
	ids   map[Type]int
	types []Type
}

// Ref returns the reference of t, adding t to the table the first time:
// the module of its named base type ("D" when it has none), a backquote
// and its number.
func (tb *Table) Ref(t Type) string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	id, ok := tb.ids[t]
	if !ok {
		if tb.ids == nil {
			tb.ids = map[Type]int{}
		}
		id = len(tb.types)
		tb.ids[t] = id
		tb.types = append(tb.types, t)
	}
	return moduleOf(t) + "`" + strconv.Itoa(id)
}

// Lookup returns the type ref refers to.
func (tb *Table) Lookup(ref string) (Type, error) {
	mod, num, ok := strings.Cut(ref, "`")
	if !ok {
		return nil, fmt.Errorf("type reference %q: not module`id", ref)
	}
	id, err := strconv.Atoi(num)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if err != nil || id < 0 || id >= len(tb.types) || moduleOf(tb.types[id]) != mod {
		return nil, fmt.Errorf("type reference %q: no such type", ref)
	}
	return tb.types[id], nil
}

// moduleOf returns the module that defines t's named base type.
func moduleOf(t Type) string {
	for range 64 {
		switch u := t.(type) {
		case *Pointer:
			t = u.Elem
		case *Array:
			t = u.Elem
		case *Qualified:
			t = u.Type
		case *Func:
			t = u.Result
		case *Typedef:
			return orD(u.Module)
		case *Struct:
			return orD(u.Module)
		case *Enum:
			return orD(u.Module)
		default:
			return "D"
		}
	}
	return "D"
}

func orD(module string) string {
	if module == "" {
		return "D"
	}
	return module
}
