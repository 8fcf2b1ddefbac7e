package types

import (
	"errors"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	foo := &Struct{Name: "foo"}
	tests := []struct {
		t    Type
		want string
	}{
		{IntType, "int"},
		{&Pointer{Elem: Char}, "char *"},
		{&Pointer{Elem: &Qualified{Qual: Const, Type: Char}}, "const char *"},
		{&Qualified{Qual: Const, Type: &Pointer{Elem: Char}}, "char *const"},
		{&Pointer{Elem: &Qualified{Qual: Const, Type: &Pointer{Elem: Char}}}, "char *const *"},
		{&Array{Elem: IntType, Len: 4}, "int [4]"},
		{&Pointer{Elem: &Array{Elem: IntType, Len: 4}}, "int (*)[4]"},
		{&Array{Elem: &Pointer{Elem: IntType}, Len: 4}, "int *[4]"},
		{&Pointer{Elem: &Func{Result: Void{}}}, "void (*)()"},
		{&Pointer{Elem: foo}, "struct foo *"},
		{&Struct{Union: true}, "union (anon)"},
		{&String{Bytes: 256}, "string"},
		{Stack, "stack"},
	}
	for _, tt := range tests {
		if got := tt.t.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

func TestLoadMembers(t *testing.T) {
	calls := 0
	s := &Struct{Name: "s", Bytes: 8}
	s.LoadMembers(func() ([]Member, error) {
		calls++
		// Asked again while loading, the struct has no members yet.
		if ms := s.Members(); ms != nil {
			t.Errorf("Members while loading = %v, want none", ms)
		}
		return []Member{{Name: "x", Type: Long}}, nil
	})
	if calls != 0 {
		t.Fatal("LoadMembers ran the loader")
	}
	if s.String() != "struct s" || s.Size() != 8 {
		t.Errorf("the struct's name and size need its members: %v, %d", s, s.Size())
	}
	if calls != 0 {
		t.Fatal("String or Size ran the loader")
	}
	for range 2 {
		if m, ok := s.Member("x"); !ok || m.Type != Long {
			t.Errorf("Member(x) = %+v, %v", m, ok)
		}
	}
	if calls != 1 || s.Err() != nil {
		t.Errorf("loader ran %d times, Err %v; want once, nil", calls, s.Err())
	}

	bad := &Struct{Name: "bad", Bytes: 8}
	bad.LoadMembers(func() ([]Member, error) {
		return []Member{{Name: "x", Type: Long}}, errors.New("malformed")
	})
	if ms := bad.Members(); ms != nil || bad.Err() == nil || bad.Align() != 1 {
		t.Errorf("a failed load gave members %v, Err %v, Align %d; want none, the error, 1", ms, bad.Err(), bad.Align())
	}
	bad.SetMembers([]Member{{Name: "y", Type: IntType}})
	if bad.Err() != nil || len(bad.Members()) != 1 {
		t.Errorf("SetMembers kept the loader's state: %v, %v", bad.Members(), bad.Err())
	}
}

func TestMember(t *testing.T) {
	inner := &Struct{Union: true, Bytes: 8}
	inner.SetMembers([]Member{
		{Name: "a", Type: Long},
		{Name: "b", Type: IntType},
	})
	s := &Struct{Name: "s", Bytes: 16}
	s.SetMembers([]Member{
		{Name: "x", Type: IntType},
		{Type: inner, Offset: 64},
	})
	m, ok := s.Member("b")
	if !ok || m.Offset != 64 || m.Type != IntType {
		t.Fatalf("Member(b) = %+v, %v; want offset 64 int", m, ok)
	}
	if _, ok := s.Member("c"); ok {
		t.Fatal("Member(c) found a member that does not exist")
	}
}

func TestPredicates(t *testing.T) {
	size := &Typedef{Name: "size_t", Type: ULong}
	tests := []struct {
		name                      string
		t                         Type
		integer, scalar, void, ok bool
	}{
		{"int", IntType, true, true, false, true},
		{"size_t", size, true, true, false, true},
		{"void", Void{}, false, false, true, false},
		{"stack", Stack, false, false, false, false},
		{"pointer", VoidPtr, false, true, false, true},
		{"struct", &Struct{Name: "f", Incomplete: true}, false, false, false, false},
	}
	for _, tt := range tests {
		if IsInteger(tt.t) != tt.integer || IsScalar(tt.t) != tt.scalar || IsVoid(tt.t) != tt.void || IsComplete(tt.t) != tt.ok {
			t.Errorf("%s: integer %v scalar %v void %v complete %v", tt.name,
				IsInteger(tt.t), IsScalar(tt.t), IsVoid(tt.t), IsComplete(tt.t))
		}
	}
}

func TestPromote(t *testing.T) {
	tests := []struct{ l, r, want Type }{
		{IntType, Long, Long},
		{UInt, IntType, UInt},
		{Long, ULong, ULong},
		{&Enum{Name: "e", Bytes: 4}, Char, IntType},
		{Long, Char, Long},
	}
	for _, tt := range tests {
		if got := Promote(tt.l, tt.r); got != tt.want {
			t.Errorf("Promote(%v, %v) = %v, want %v", tt.l, tt.r, got, tt.want)
		}
	}
}

func TestLookup(t *testing.T) {
	c, d := Builtin(256)
	u := &Universe{Modules: []Module{d, c}}
	for _, name := range []string{"int", "D`size_t", "C`unsigned long", "string"} {
		if _, _, err := u.Lookup(name); err != nil {
			t.Errorf("Lookup(%q): %v", name, err)
		}
	}
	if _, _, err := u.Lookup("nosuch`int"); err == nil {
		t.Error("Lookup(nosuch`int) found a type in a module that does not exist")
	}
	if _, _, err := u.Lookup("struct nosuch"); err == nil {
		t.Error("Lookup(struct nosuch) found a type that does not exist")
	}
}

func TestLoadModule(t *testing.T) {
	c, d := Builtin(256)
	ext4 := NewScope("ext4")
	ext4.Insert("struct inode_info", &Struct{Module: "ext4", Name: "inode_info", Bytes: 8})
	loads := 0
	u := &Universe{Modules: []Module{d, c}, Load: func(name string) (Module, error) {
		loads++
		if name == "ext4" {
			return ext4, nil
		}
		return nil, nil
	}}
	for range 2 {
		if _, m, err := u.Lookup("ext4`struct inode_info"); err != nil || m != ext4 {
			t.Fatalf("Lookup(ext4`struct inode_info) = %v, %v", m, err)
		}
	}
	if loads != 1 {
		t.Errorf("module loaded %d times, want once", loads)
	}
	if _, _, err := u.Lookup("nosuch`int"); err == nil {
		t.Error("a module Load cannot open was found")
	}
}

func TestIntSpellings(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"unsigned long", []string{"unsigned long", "long unsigned int"}},
		{"long unsigned int", []string{"long unsigned int", "unsigned long"}},
		{"signed char", []string{"signed char"}},
		{"int", []string{"int"}},
		{"short", []string{"short", "short int"}},
	}
	for _, tt := range tests {
		got, ok := IntSpellings(strings.Fields(tt.in))
		if !ok || strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("IntSpellings(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	if _, ok := IntSpellings([]string{"struct", "x"}); ok {
		t.Error("IntSpellings took a struct for an integer")
	}
}
