package linux

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/record"
)

// An aggMap reads one shape of the runtime's aggregation maps at each
// snapshot. The map the probes aggregate into is swapped for an empty
// one (bpf.Runtime.SwapAggs), then read and emptied: as dtrace switches
// each CPU's aggregation buffer for its other and hands the consumer
// all the buffer held, the consumer keeps every key, and the map's room
// is the keys of one snapshot's interval, not of the whole tracing.
type aggMap struct {
	// key appends an entry's key as the record layout has it
	// (bpf.Runtime.AggKey); nil: as the map has it.
	key     func(dst, key []byte) []byte
	ncpu    int
	keySize int
	valSize int // one CPU's value: the data, then bpf.AggTouched bytes
	stride  int // every CPU's value, each on 8 bytes as the kernel copies them

	// Batch lookups (BPF_MAP_LOOKUP_AND_DELETE_BATCH) read and delete
	// a few thousand entries a system call, where iterating takes three
	// a key; noBatch says the kernel lacks them, or the map is shared.
	noBatch bool
	batch   int
	keys    reflect.Value // a slice of batch [keySize]byte
	vals    []byte
}

// aggBatchBytes bounds the values a batch lookup reads at once.
const aggBatchBytes = 1 << 20

// newAggMap returns the reader of the maps of m's shape.
func newAggMap(m *ebpf.Map, ncpu int) *aggMap {
	shared := m.Type() != ebpf.PerCPUHash
	if shared {
		// A map the CPUs share (bpf.Layout's big quantizations) holds
		// one value a key, read as the first CPU's, by iterating: its
		// keys are few and its values large.
		ncpu = 1
	}
	valSize := int(m.ValueSize())
	a := &aggMap{
		ncpu:    ncpu,
		keySize: int(m.KeySize()),
		valSize: valSize,
		stride:  ncpu * ((valSize + 7) &^ 7),
	}
	a.batch = min(4096, max(1, aggBatchBytes/a.stride))
	a.noBatch = shared
	return a
}

// empty reports whether m, which the probes may be aggregating into,
// has no entry: a snapshot has nothing to take from it.
func (a *aggMap) empty(m *ebpf.Map) (bool, error) {
	k, err := m.NextKeyBytes(nil)
	if err != nil {
		return false, fmt.Errorf("reading an aggregation map: %w", err)
	}
	return k == nil, nil
}

// drain calls fn with every key of m and its value on every CPU, both
// valid until fn returns, and deletes them. No program may be using m.
func (a *aggMap) drain(m *ebpf.Map, fn func(key, vals []byte)) error {
	if !a.noBatch {
		err := a.drainBatch(m, fn)
		if !errors.Is(err, ebpf.ErrNotSupported) {
			return err
		}
		a.noBatch = true
	}
	// Read whole, then deleted: a hash map's iteration restarts from
	// its first bucket after a key deleted.
	var keys [][]byte
	var key, val []byte
	var vals [][]byte
	it := m.Iterate()
	flat := make([]byte, a.stride)
	if m.Type() != ebpf.PerCPUHash {
		for it.Next(&key, &val) {
			copy(flat, val)
			fn(key, flat)
			keys = append(keys, bytes.Clone(key))
		}
	} else {
		for it.Next(&key, &vals) {
			for cpu, v := range vals {
				copy(flat[cpu*a.stride/a.ncpu:], v)
			}
			fn(key, flat)
			keys = append(keys, bytes.Clone(key))
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	for _, k := range keys {
		if err := m.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// drainBatch is drain through batch lookups. It returns
// ebpf.ErrNotSupported before calling fn if the kernel has none.
func (a *aggMap) drainBatch(m *ebpf.Map, fn func(key, vals []byte)) error {
	var cursor ebpf.MapBatchCursor
	for {
		if !a.keys.IsValid() || a.keys.Len() != a.batch {
			a.keys = reflect.MakeSlice(reflect.SliceOf(reflect.ArrayOf(a.keySize, reflect.TypeFor[byte]())), a.batch, a.batch)
			a.vals = make([]byte, a.batch*a.stride)
		}
		// keys and vals are the syscall's own buffers, of the sizes
		// cilium/ebpf reads them in place for (no copy, no per-entry
		// decoding).
		n, err := m.BatchLookupAndDelete(&cursor, a.keys.Interface(), a.vals, nil)
		if errors.Is(err, unix.ENOSPC) {
			// A hash bucket holds more entries than a batch; the
			// cursor stays on it, none of them deleted.
			a.batch *= 2
			continue
		}
		if err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return err
		}
		for i := range n {
			fn(a.keys.Index(i).Bytes(), a.vals[i*a.stride:(i+1)*a.stride])
		}
		if err != nil {
			return nil // ErrKeyNotExist: the last batch
		}
	}
}

// An aggFn is an aggregation's function and its argument (lquantize's
// and llquantize's parameters).
type aggFn struct {
	fn  dof.ActKind
	arg uint64
}

// snap appends to bufs[cpu] each entry of m, a map of a's shape the
// probes have stopped aggregating into, on every CPU that aggregated
// its key, in the kernel's layout of an aggregation buffer, and empties
// m. fns gives the aggregating function of each aggregation ID.
func (a *aggMap) snap(m *ebpf.Map, bufs [][]byte, fns map[uint32]aggFn) error {
	per := a.stride / a.ncpu
	err := a.drain(m, func(key, vals []byte) {
		fn := fns[binary.LittleEndian.Uint32(key)]
		for cpu := range a.ncpu {
			v := vals[cpu*per : cpu*per+a.valSize]
			if binary.LittleEndian.Uint64(v[len(v)-bpf.AggTouched:]) == 0 {
				// Made by another CPU: zero here.
				continue
			}
			b := a.appendKey(bufs[cpu], key)
			bufs[cpu] = appendValue(b, fn, v)
		}
	})
	if err != nil {
		return fmt.Errorf("reading an aggregation map: %w", err)
	}
	return nil
}

// appendKey appends an entry's key (the aggregation's ID first) to an
// aggregation buffer, on 8 bytes as the kernel places entries.
func (a *aggMap) appendKey(buf, key []byte) []byte {
	for len(buf)%8 != 0 {
		buf = binary.LittleEndian.AppendUint32(buf, record.AggIDNone)
	}
	if a.key != nil {
		return a.key(buf, key)
	}
	return append(buf, key...)
}

// appendValue appends a CPU's value v of an entry to buf as dtrace's
// aggregation buffer holds it: min's and max's as values, lquantize's
// and llquantize's parameters as the aggregation has them.
func appendValue(buf []byte, f aggFn, v []byte) []byte {
	v = v[:len(v)-bpf.AggTouched]
	start := len(buf)
	buf = append(buf, v...)
	d := buf[start:]
	switch f.fn {
	case dof.AggMin, dof.AggMax:
		binary.LittleEndian.PutUint64(d, uint64(bpf.MinMaxValue(f.fn, binary.LittleEndian.Uint64(v))))
	case dof.AggLQuantize, dof.AggLLQuantize:
		// Only the CPU that made a per-CPU hash entry has them: the
		// kernel zeroes the others' values, which another CPU's firing
		// then finds and counts in.
		binary.LittleEndian.PutUint64(d, f.arg)
	}
	return buf
}
