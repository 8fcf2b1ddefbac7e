package vm_test

import (
	"encoding/binary"
	"testing"

	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/dlang/emit"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
)

// TestPerDescriptionValues runs the ECBs of a clause with three probe
// descriptions whose args[0] point to structs that lay out member y
// differently, each over memory laid out like its struct: each reads
// its own y, at its offset, with its size and sign.
func TestPerDescriptionValues(t *testing.T) {
	member := func(name string, t types.Type, off int64) types.Member {
		return types.Member{Name: name, Type: t, Offset: off * 8}
	}
	sa := &types.Struct{Name: "a", Bytes: 16} // struct a { int x; long y; }
	sa.SetMembers([]types.Member{member("x", types.IntType, 0), member("y", types.Long, 8)})
	sb := &types.Struct{Name: "b", Bytes: 33} // struct b { char pad[32]; char y; }
	sb.SetMembers([]types.Member{member("pad", &types.Array{Elem: types.Char, Len: 32}, 0), member("y", types.Char, 32)})
	sc := &types.Struct{Name: "c", Bytes: 8} // struct c { int x; unsigned short y; }
	sc.SetMembers([]types.Member{member("x", types.IntType, 0), member("y", types.UShort, 4)})
	probe := func(s *types.Struct) check.ProbeMatch {
		return check.ProbeMatch{Count: 1, Typed: true, Args: []types.Type{&types.Pointer{Elem: s}}}
	}
	probes := dtracetest.Probes{"fbt::fa:entry": probe(sa), "fbt::fb:entry": probe(sb), "fbt::fc:entry": probe(sc)}

	src := "fbt::fa:entry, fbt::fb:entry, fbt::fc:entry { trace(args[0]->y); trace(args[0]->y + 1); }"
	_, _, p, err := dtracetest.CompileWith("t.d", []byte(src), nil, &check.Config{Probes: probes})
	if err != nil {
		t.Fatal(err)
	}

	// Each struct's memory: y holds -2 (a), -3 (b), 0xfffe (c); every
	// other byte is 0x55, so that a load at another offset or of
	// another size reads something else.
	fill := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = 0x55
		}
		return b
	}
	memA, memB, memC := fill(16), fill(40), fill(8)
	binary.LittleEndian.PutUint64(memA[8:], uint64(0xfffffffffffffffe))
	memB[32] = 0xfd
	binary.LittleEndian.PutUint16(memC[4:], 0xfffe)
	kmem := vm.Segments{{Addr: 0x10000, Data: memA}, {Addr: 0x20000, Data: memB}, {Addr: 0x30000, Data: memC}}

	tests := []struct {
		probe string
		addr  uint64
		want  [2]int64 // y, y + 1
	}{
		{"fbt::fa:entry", 0x10000, [2]int64{-2, -1}},
		{"fbt::fb:entry", 0x20000, [2]int64{-3, -2}},
		{"fbt::fc:entry", 0x30000, [2]int64{0xfffe, 0xffff}},
	}
	if len(p.ECBs) != len(tests) {
		t.Fatalf("%d ECBs, want %d:\n%s", len(p.ECBs), len(tests), listing(p))
	}
	for i, tt := range tests {
		ecb := p.ECBs[i]
		if ecb.Probe.String() != tt.probe {
			t.Errorf("ECB %d is for %s, want %s", i, ecb.Probe, tt.probe)
			continue
		}
		m := vm.New(&vm.Config{Kernel: kmem})
		ctx := &vm.Context{Args: []uint64{tt.addr}}
		m.BeginFiring()
		m.BeginClause()
		for j, a := range ecb.Actions {
			v, err := m.Run(emit.Object(a.DIFO), ctx)
			if err != nil {
				t.Errorf("%s action %d: %v", tt.probe, j+1, err)
				continue
			}
			if int64(v) != tt.want[j] {
				t.Errorf("%s action %d = %#x, want %#x", tt.probe, j+1, v, uint64(tt.want[j]))
			}
		}
	}
}
