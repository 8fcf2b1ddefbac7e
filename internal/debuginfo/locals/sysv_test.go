package locals

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kdtrace/kdtrace/dlang/types"
)

func TestSysVArgs(t *testing.T) {
	var (
		i32    = &types.Int{Name: "int", Bytes: 4, Signed: true}
		i64    = &types.Int{Name: "long", Bytes: 8, Signed: true}
		i128   = &types.Int{Name: "__int128", Bytes: 16, Signed: true}
		ptr    = &types.Pointer{Elem: i32}
		dbl    = &types.Float{Name: "double", Bytes: 8}
		ldbl   = &types.Float{Name: "long double", Bytes: 16}
		two    = &types.Struct{Name: "two", Bytes: 16}
		big    = &types.Struct{Name: "big", Bytes: 24}
		mixed  = &types.Struct{Name: "mixed", Bytes: 16}
		packed = &types.Struct{Name: "packed", Bytes: 12}
		fl2    = &types.Struct{Name: "fl2", Bytes: 8}
	)
	two.SetMembers([]types.Member{{Name: "x", Type: i64}, {Name: "y", Type: i64, Offset: 64}})
	big.SetMembers([]types.Member{{Name: "a", Type: i64}, {Name: "b", Type: i64, Offset: 64}, {Name: "c", Type: i64, Offset: 128}})
	mixed.SetMembers([]types.Member{{Name: "d", Type: dbl}, {Name: "n", Type: i64, Offset: 64}})
	packed.SetMembers([]types.Member{{Name: "c", Type: i32}, {Name: "l", Type: i64, Offset: 32}})
	fl2.SetMembers([]types.Member{{Name: "a", Type: &types.Float{Name: "float", Bytes: 4}}, {Name: "b", Type: &types.Float{Name: "float", Bytes: 4}, Offset: 32}})
	const rdi, rsi, rdx, rcx, r8, r9 = 5, 4, 1, 2, 8, 9
	tests := []struct {
		name   string
		params []types.Type
		result types.Type
		want   []argLoc
	}{
		{"six registers then the stack", []types.Type{i32, i64, ptr, i32, i64, ptr, i32, i64}, i32,
			[]argLoc{{Regs: []int{rdi}}, {Regs: []int{rsi}}, {Regs: []int{rdx}}, {Regs: []int{rcx}}, {Regs: []int{r8}}, {Regs: []int{r9}},
				{Memory: true, Stack: 0}, {Memory: true, Stack: 8}}},
		{"struct result in memory takes rdi", []types.Type{i64}, big, []argLoc{{Regs: []int{rsi}}}},
		{"struct result in registers does not", []types.Type{i64}, two, []argLoc{{Regs: []int{rdi}}}},
		{"two eightbytes, memory, double", []types.Type{two, big, dbl, i32}, nil,
			[]argLoc{{Regs: []int{rdi, rsi}}, {Memory: true, Stack: 0}, {SSE: true}, {Regs: []int{rdx}}}},
		{"a struct that no longer fits goes whole on the stack, the next int still in a register",
			[]types.Type{i64, i64, i64, i64, i64, two, i32}, nil,
			[]argLoc{{Regs: []int{rdi}}, {Regs: []int{rsi}}, {Regs: []int{rdx}}, {Regs: []int{rcx}}, {Regs: []int{r8}}, {Memory: true, Stack: 0}, {Regs: []int{r9}}}},
		{"mixed classes", []types.Type{mixed, fl2, i32}, nil, []argLoc{{Regs: []int{rdi}, SSE: true}, {SSE: true}, {Regs: []int{rsi}}}},
		{"unaligned member", []types.Type{packed, i32}, nil, []argLoc{{Memory: true, Stack: 0}, {Regs: []int{rdi}}}},
		{"long double on the stack, 16-aligned", []types.Type{i32, i32, i32, i32, i32, i32, i32, ldbl, i32}, nil,
			[]argLoc{{Regs: []int{rdi}}, {Regs: []int{rsi}}, {Regs: []int{rdx}}, {Regs: []int{rcx}}, {Regs: []int{r8}}, {Regs: []int{r9}},
				{Memory: true, Stack: 0}, {Memory: true, Stack: 16}, {Memory: true, Stack: 32}}},
		{"__int128 in two registers", []types.Type{i32, i128}, nil, []argLoc{{Regs: []int{rdi}}, {Regs: []int{rsi, rdx}}}},
		{"nine doubles: the ninth on the stack", []types.Type{dbl, dbl, dbl, dbl, dbl, dbl, dbl, dbl, dbl, i32}, nil,
			[]argLoc{{SSE: true}, {SSE: true}, {SSE: true}, {SSE: true}, {SSE: true}, {SSE: true}, {SSE: true}, {SSE: true},
				{Memory: true, Stack: 0}, {Regs: []int{rdi}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sysvPlaces(tt.params, tt.result)
			if d := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("sysvPlaces (-want +got):\n%s", d)
			}
		})
	}
	t.Run("empty struct", func(t *testing.T) {
		empty := &types.Struct{Name: "empty"}
		got := sysvPlaces([]types.Type{empty, i32}, empty)
		if d := cmp.Diff([]argLoc{{}, {Regs: []int{rdi}}}, got, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("sysvPlaces (-want +got):\n%s", d)
		}
	})
	t.Run("damaged types", func(t *testing.T) {
		self := &types.Struct{Name: "self", Bytes: 8}
		self.SetMembers([]types.Member{{Name: "s", Type: self}})
		huge := &types.Array{Elem: &types.Struct{Name: "empty"}, Len: 1 << 62}
		got := sysvPlaces([]types.Type{huge, self}, nil)
		if got[0].Err != nil || got[1].Err == nil {
			t.Errorf("sysvPlaces = %+v, want the empty array placed nowhere and the struct holding itself refused", got)
		}
	})
	t.Run("unknown type stops the placing", func(t *testing.T) {
		got := sysvPlaces([]types.Type{i32, nil, i32}, nil)
		if got[0].Err != nil || got[1].Err == nil || got[2].Err == nil {
			t.Errorf("sysvPlaces = %+v, want the second and third unplaced", got)
		}
	})
}
