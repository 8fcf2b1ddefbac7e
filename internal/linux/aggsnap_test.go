package linux

import (
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/record"
)

// Aggregation IDs of the test's map, and their functions.
const (
	idCount = 1
	idMin   = 2
	idLQ    = 3
)

// lqParams are the lquantize()'s parameters.
const lqParams = 0x1234

var testFns = map[uint32]aggFn{idCount: {fn: dof.AggCount}, idMin: {fn: dof.AggMin}, idLQ: {dof.AggLQuantize, lqParams}}

// An update sets an entry's value on one CPU: two data words, then the
// touched word (0: the CPU never aggregated the key).
type update struct {
	id      uint32
	key     uint64
	cpu     int
	w0, w1  uint64
	touched uint64
}

// newTestMap creates a per-CPU hash of the shape an aggregation with
// one 8-byte key and 16 bytes of data takes, or skips the test.
func newTestMap(t *testing.T, entries int) *ebpf.Map {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("creating BPF maps needs root")
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUHash, KeySize: 12, ValueSize: 16 + bpf.AggTouched, MaxEntries: uint32(entries)})
	if err != nil {
		t.Skipf("creating a per-CPU hash map: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func testKey(id uint32, key uint64) []byte {
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(nil, id), key)
}

// apply makes each update, keeping the other CPUs' values of an entry.
func apply(t *testing.T, m *ebpf.Map, ncpu int, us []update) {
	t.Helper()
	for _, u := range us {
		k := testKey(u.id, u.key)
		var vals [][]byte
		if err := m.Lookup(k, &vals); err != nil {
			vals = make([][]byte, ncpu)
			for i := range vals {
				vals[i] = make([]byte, 16+bpf.AggTouched)
			}
		}
		v := vals[u.cpu]
		binary.LittleEndian.PutUint64(v, u.w0)
		binary.LittleEndian.PutUint64(v[8:], u.w1)
		binary.LittleEndian.PutUint64(v[16:], u.touched)
		if err := m.Put(k, vals); err != nil {
			t.Fatal(err)
		}
	}
}

// decode returns the entries of each CPU's aggregation buffer, as
// "cpu id/key" → the data's two words.
func decode(t *testing.T, bufs [][]byte) map[string][2]uint64 {
	t.Helper()
	got := map[string][2]uint64{}
	for cpu, b := range bufs {
		for len(b) > 0 {
			id := binary.LittleEndian.Uint32(b)
			if id == record.AggIDNone {
				b = b[4:]
				continue
			}
			if len(b) < 28 {
				t.Fatalf("CPU %d: %d bytes left of an entry", cpu, len(b))
			}
			k := fmt.Sprintf("%d %d/%d", cpu, id, binary.LittleEndian.Uint64(b[4:]))
			if _, dup := got[k]; dup {
				t.Fatalf("%s twice", k)
			}
			got[k] = [2]uint64{binary.LittleEndian.Uint64(b[12:]), binary.LittleEndian.Uint64(b[20:])}
			b = b[28:]
		}
	}
	return got
}

// TestAggMapSnap takes the entries of a map in snapshots: each the
// values of the CPUs that aggregated a key, the map left empty.
func TestAggMapSnap(t *testing.T) {
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Skip(err)
	}
	minWord := func(v int64) uint64 { return bpf.MinMaxWord(dof.AggMin, v) }
	steps := []struct {
		name string
		set  []update
		want map[string][2]uint64
	}{
		{
			name: "new entries",
			set: []update{
				{id: idCount, key: 7, cpu: 0, w0: 3, touched: 1},
				{id: idMin, key: 7, cpu: 0, w0: minWord(-5), touched: 1},
				{id: idLQ, key: 1, cpu: 0, w0: lqParams, w1: 2, touched: 1},
				{id: idCount, key: 8, cpu: 0, touched: 0}, // never aggregated
			},
			want: map[string][2]uint64{
				"0 1/7": {3, 0},
				"0 2/7": {uint64(0xfffffffffffffffb), 0}, // -5
				"0 3/1": {lqParams, 2},
			},
		},
		{
			name: "none since",
			want: map[string][2]uint64{},
		},
		{
			name: "the same keys again",
			set: []update{
				{id: idCount, key: 7, cpu: 0, w0: 2, touched: 1},
				{id: idMin, key: 7, cpu: 0, w0: minWord(-9), touched: 1},
				{id: idLQ, key: 1, cpu: 0, w0: lqParams, w1: 4, touched: 1},
				{id: idCount, key: 8, cpu: 0, w0: 4, touched: 1},
			},
			want: map[string][2]uint64{
				"0 1/7": {2, 0},
				"0 2/7": {uint64(0xfffffffffffffff7), 0},
				"0 3/1": {lqParams, 4},
				"0 1/8": {4, 0},
			},
		},
	}
	if ncpu > 1 {
		steps = append(steps, struct {
			name string
			set  []update
			want map[string][2]uint64
		}{
			name: "another CPU",
			set: []update{
				{id: idCount, key: 7, cpu: 1, w0: 10, touched: 1},
				// An entry CPU 0 made: CPU 1's value lacks the
				// parameters.
				{id: idLQ, key: 1, cpu: 0, w0: lqParams, w1: 1, touched: 1},
				{id: idLQ, key: 1, cpu: 1, w0: 0, w1: 3, touched: 1},
			},
			want: map[string][2]uint64{"1 1/7": {10, 0}, "0 3/1": {lqParams, 1}, "1 3/1": {lqParams, 3}},
		})
	}
	for _, batch := range []bool{true, false} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			m := newTestMap(t, 64)
			a := newAggMap(m, ncpu)
			a.noBatch = !batch
			for _, s := range steps {
				apply(t, m, ncpu, s.set)
				bufs := make([][]byte, ncpu)
				if err := a.snap(m, bufs, testFns); err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if diff := cmp.Diff(s.want, decode(t, bufs)); diff != "" {
					t.Errorf("%s: entries (-want +got):\n%s", s.name, diff)
				}
				if n := entries(t, m); n != 0 {
					t.Errorf("%s: %d entries left in the map", s.name, n)
				}
			}
		})
	}
}

// entries counts the entries of m.
func entries(t *testing.T, m *ebpf.Map) int {
	t.Helper()
	n := 0
	k, err := m.NextKeyBytes(nil)
	for ; k != nil && err == nil; k, err = m.NextKeyBytes(k) {
		n++
	}
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAggMapSnapShared takes the entries of a map the CPUs share (a
// big quantization's): one value a key, the first CPU's, the map left
// empty.
func TestAggMapSnapShared(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating BPF maps needs root")
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 12, ValueSize: 16 + bpf.AggTouched, MaxEntries: 64})
	if err != nil {
		t.Skipf("creating a hash map: %v", err)
	}
	defer m.Close()
	for key, w1 := range map[uint64]uint64{1: 5, 2: 0} {
		v := binary.LittleEndian.AppendUint64(nil, lqParams)
		v = binary.LittleEndian.AppendUint64(v, w1)
		v = binary.LittleEndian.AppendUint64(v, 1)
		if err := m.Put(testKey(idLQ, key), v); err != nil {
			t.Fatal(err)
		}
	}
	a := newAggMap(m, 2)
	bufs := make([][]byte, 2)
	if err := a.snap(m, bufs, testFns); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]uint64{"0 3/1": {lqParams, 5}, "0 3/2": {lqParams, 0}}
	if diff := cmp.Diff(want, decode(t, bufs)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if left := entries(t, m); left != 0 {
		t.Errorf("%d entries left in the map", left)
	}
}

// TestAggMapSnapMany reads a map of more entries than a batch, from a
// batch too small for the hash table's buckets on: every entry once,
// the map left empty.
func TestAggMapSnapMany(t *testing.T) {
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		t.Skip(err)
	}
	const n = 20000
	m := newTestMap(t, n)
	keys := make([][]byte, n)
	vals := make([][]byte, n*ncpu)
	for i := range n {
		keys[i] = testKey(idCount, uint64(i))
		for cpu := range ncpu {
			v := make([]byte, 16+bpf.AggTouched)
			binary.LittleEndian.PutUint64(v, uint64(i*ncpu+cpu+1))
			binary.LittleEndian.PutUint64(v[16:], 1)
			vals[i*ncpu+cpu] = v
		}
	}
	for _, batch := range []bool{true, false} {
		if _, err := m.BatchUpdate(keys, vals, nil); err != nil {
			for i := range n {
				if err := m.Put(keys[i], vals[i*ncpu:(i+1)*ncpu]); err != nil {
					t.Fatal(err)
				}
			}
		}
		a := newAggMap(m, ncpu)
		a.noBatch = !batch
		a.batch = 1
		bufs := make([][]byte, ncpu)
		if err := a.snap(m, bufs, testFns); err != nil {
			t.Fatal(err)
		}
		if batch && a.noBatch {
			t.Logf("the kernel has no batch lookups: read by iterating")
		}
		got := decode(t, bufs)
		want := map[string][2]uint64{}
		for i := range n {
			for cpu := range ncpu {
				want[fmt.Sprintf("%d 1/%d", cpu, i)] = [2]uint64{uint64(i*ncpu + cpu + 1), 0}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("batch=%v: entries (-want +got):\n%.2000s", batch, diff)
		}
		if left := entries(t, m); left != 0 {
			t.Errorf("batch=%v: %d entries left in the map", batch, left)
		}
	}
}

// BenchmarkAggMapSnap takes snapshots of a map holding n keys, each
// aggregated on every CPU since the last.
func BenchmarkAggMapSnap(b *testing.B) {
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		b.Skip(err)
	}
	if os.Geteuid() != 0 {
		b.Skip("creating BPF maps needs root")
	}
	for _, n := range []int{10000, 90000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.PerCPUHash, KeySize: 12, ValueSize: 16 + bpf.AggTouched, MaxEntries: uint32(n)})
			if err != nil {
				b.Skip(err)
			}
			defer m.Close()
			keys := make([][12]byte, n)
			vals := make([][16 + bpf.AggTouched]byte, n*ncpu)
			for i := range n {
				keys[i] = [12]byte(testKey(idCount, uint64(i)))
				for cpu := range ncpu {
					binary.LittleEndian.PutUint64(vals[i*ncpu+cpu][:], 1)
					binary.LittleEndian.PutUint64(vals[i*ncpu+cpu][16:], 1)
				}
			}
			a := newAggMap(m, ncpu)
			for b.Loop() {
				b.StopTimer()
				if _, err := m.BatchUpdate(keys, vals, nil); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				bufs := make([][]byte, ncpu)
				if err := a.snap(m, bufs, testFns); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
