package cachefile

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWords reads tables in place: of uint32s and of pairs, empty, of
// records of another size, and misaligned.
func TestWords(t *testing.T) {
	var e Encoder
	e.U64(3)
	for _, w := range []uint32{1, 2, 0xdeadbeef} {
		e.U32(w)
	}
	e.U64(1)
	e.U32(7)
	e.U32(8)
	e.U64(0)
	d := Decoder{B: e.B}
	ws, ok := Words[uint32](d.Table(4))
	if diff := cmp.Diff([]uint32{1, 2, 0xdeadbeef}, ws); !ok || diff != "" {
		t.Errorf("uint32s: ok %v (-want +got):\n%s", ok, diff)
	}
	type pair struct{ a, b uint32 }
	ps, ok := Words[pair](d.Table(8))
	if !ok || len(ps) != 1 || ps[0] != (pair{7, 8}) {
		t.Errorf("pairs = %v, %v; want [{7 8}]", ps, ok)
	}
	if ws, ok := Words[uint32](d.Table(4)); !ok || len(ws) != 0 {
		t.Errorf("empty table = %v, %v", ws, ok)
	}
	if _, ok := Words[pair](Table{b: make([]byte, 8), size: 4}); ok {
		t.Error("records of 4 bytes read as pairs")
	}
	buf := make([]byte, 12)
	if _, ok := Words[uint32](Table{b: buf[1:9], size: 4}); ok {
		t.Error("misaligned records read in place")
	}
}
