package types

import "testing"

func TestTable(t *testing.T) {
	var tb Table
	foo := &Typedef{Module: "D", Name: "foo_t", Type: &Struct{Module: "D", Name: "foo"}}
	task := &Struct{Module: "vmlinux", Name: "task_struct"}
	tests := []struct {
		t    Type
		want string
	}{
		{IntType, "D`0"},
		{&Pointer{Elem: task}, "vmlinux`1"},
		{foo, "D`2"},
		{&Array{Elem: &Typedef{Name: "bar_t", Type: IntType}, Len: 2}, "D`3"},
		{IntType, "D`0"}, // numbered once
	}
	for _, tt := range tests {
		ref := tb.Ref(tt.t)
		if ref != tt.want {
			t.Errorf("Ref(%v) = %q, want %q", tt.t, ref, tt.want)
		}
		got, err := tb.Lookup(ref)
		if err != nil || got != tt.t {
			t.Errorf("Lookup(%q) = %v, %v; want %v", ref, got, err, tt.t)
		}
	}
	for _, bad := range []string{"D`4", "vmlinux`0", "D`-1", "D`x", "int", ""} {
		if got, err := tb.Lookup(bad); err == nil {
			t.Errorf("Lookup(%q) = %v, want an error", bad, got)
		}
	}
}
