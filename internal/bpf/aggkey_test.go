package bpf_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"strings"
	"testing"
)

// TestAggKeyPacked checks the keys of aggregations keyed on strings: an
// aggregation keyed on execname keeps its name's 16 bytes in its map,
// not strsize's, and one keyed on the probe's names their rooms; one
// keyed on another string keeps the whole key. Either way AggKey gives
// back the key of the record layout: the ID, the aggregation variable,
// the strings padded with zeroes, the other records.
func TestAggKeyPacked(t *testing.T) {
	needBPF(t)
	defer onCPU0(t)()
	// The first clause, firing alone, leaves a long key in the buffer
	// the others then build theirs in: bytes a whole key must not keep,
	// nor a packed one need to clear.
	long := strings.Repeat("x", 120) + strings.Repeat("y", 120)
	r := newProbeRun(t, `
		BEGIN /arg0 == 1/ { @z[strjoin("`+long[:120]+`", "`+long[120:]+`")] = count(); }
		BEGIN /arg0 == 7/ { @a[execname, arg0] = count(); }
		BEGIN /arg0 == 7/ { @c[execname] = count(); }
		BEGIN /arg0 == 7/ { @c[strjoin("a", "b")] = count(); }
		BEGIN /arg0 == 7/ { @d[probefunc, probename] = count(); }`)
	if err := r.rt.SetProbeNames(beginProbe.ID, "dtrace", "", "somefunc", "BEGIN"); err != nil {
		t.Fatal(err)
	}
	r.fire(t, 1)
	r.fire(t, 7)
	comm, err := os.ReadFile("/proc/thread-self/comm")
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(string(comm), "\n")

	// want is each aggregation's key as the record layout places it,
	// from the records' places: the ID, the aggregation variable's
	// record (which the compiler numbers; taken as the key has it),
	// then the tuple's.
	type aggKey struct {
		key    []byte
		varAt  uint32 // the variable's record
		packed bool
	}
	want := map[uint32]aggKey{}
	for c, ep := range r.eps {
		for i, a := range ep.Actions {
			if !a.IsAgg() {
				continue
			}
			first := i
			for first > 0 && ep.Actions[first-1].InTuple {
				first--
			}
			key := make([]byte, a.Offset-a.AggBase)
			binary.NativeEndian.PutUint32(key, a.AggID)
			recs := [][]string{
				{"", long},                // strjoin()
				{"", name, "arg0"},        // the variable, execname, arg0
				{"", name},                // execname
				{"", "ab"},                // strjoin()
				{"", "somefunc", "BEGIN"}, // probefunc, probename
			}[c]
			if len(recs) != i-first {
				t.Fatalf("clause %d: %d records in the key, want %d", c, i-first, len(recs))
			}
			for k, v := range recs {
				rec := key[ep.Actions[first+k].Offset-a.AggBase:]
				if v == "arg0" {
					binary.NativeEndian.PutUint64(rec, 7)
				} else {
					copy(rec, v)
				}
			}
			want[a.AggID] = aggKey{key: key, varAt: ep.Actions[first].Offset - a.AggBase, packed: c != 0 && c != 3}
		}
	}
	if len(want) != 5 {
		t.Fatalf("%d aggregations, want 5", len(want))
	}
	n := 0
	for _, m := range r.rt.Aggs {
		var key []byte
		var vals [][]byte
		it := m.Iterate()
		for it.Next(&key, &vals) {
			n++
			id := binary.NativeEndian.Uint32(key)
			w, ok := want[id]
			if !ok {
				t.Errorf("an entry of aggregation %d", id)
				continue
			}
			full := r.rt.AggKey(nil, key)
			if len(full) != len(w.key) {
				t.Errorf("aggregation %d: AggKey gave %d bytes, want %d", id, len(full), len(w.key))
				continue
			}
			if w.packed != (len(key) < len(full)) {
				t.Errorf("aggregation %d: a key of %d bytes in its map, of %d in the records; want it packed: %t", id, len(key), len(full), w.packed)
			}
			copy(w.key[w.varAt:w.varAt+8], full[w.varAt:])
			if !bytes.Equal(full, w.key) {
				t.Errorf("aggregation %d: key\n%q\nwant\n%q", id, bytes.TrimRight(full, "\x00"), bytes.TrimRight(w.key, "\x00"))
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if n != 5 {
		t.Errorf("%d entries, want 5", n)
	}
}
