package index

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestContainsAny checks both ways containsAny searches, few patterns
// and many, against bytes.Contains on random data, at the data's edges
// too.
func TestContainsAny(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 4096)
	for i := range data {
		data[i] = byte(r.IntN(4)) // few values, so that patterns match
	}
	found, missed := 0, 0
	for _, n := range []int{1, 3, 5, 30} {
		for range 200 {
			var pats [][]byte
			want := false
			for range n {
				p := binary.LittleEndian.AppendUint32(nil, uint32(r.IntN(256))|uint32(r.IntN(4))<<8|uint32(r.IntN(3))<<16|uint32(r.IntN(3))<<24)
				pats = append(pats, p)
				want = want || bytes.Contains(data, p)
			}
			if got := containsAny(data, pats); got != want {
				t.Fatalf("containsAny(%x) = %v, want %v", pats, got, want)
			}
			if want {
				found++
			} else {
				missed++
			}
		}
	}
	if found == 0 || missed == 0 {
		t.Fatalf("%d searches found, %d missed: the test searches for nothing", found, missed)
	}
	for _, n := range []int{1, 5} {
		pats := make([][]byte, n)
		for i := range pats {
			pats[i] = []byte{9, 9, 9, byte(i)}
		}
		edge := append(append([]byte{}, data...), 9, 9, 9, 0)
		if !containsAny(edge, pats) || !containsAny(edge[len(edge)-4:], pats) || containsAny(edge[:len(edge)-1], pats) {
			t.Errorf("%d patterns: a pattern at the end of the data is not found, or a part of it is", n)
		}
	}
}
