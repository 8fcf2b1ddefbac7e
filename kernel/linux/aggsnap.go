package linux

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"reflect"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/bpf"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/record"
)

// An aggMap is an aggregation map and what its last snapshot saw.
type aggMap struct {
	m       *ebpf.Map
	ncpu    int
	keySize int
	valSize int // one CPU's value: the data, then bpf.AggTouched bytes
	stride  int // every CPU's value, each on 8 bytes as the kernel copies them

	// Each key's slot in prev, which holds every CPU's value as the
	// last snapshot saw it: one allocation for all the keys rather
	// than one per key and CPU.
	slot map[string]int
	prev []byte

	// Batch lookups (BPF_MAP_LOOKUP_BATCH) read the map a few thousand
	// entries a system call, where iterating takes two a key; noBatch
	// says the kernel lacks them.
	noBatch bool
	batch   int
	keys    reflect.Value // a slice of batch [keySize]byte
	vals    []byte
}

// aggBatchBytes bounds the values a batch lookup reads at once.
const aggBatchBytes = 1 << 20

func newAggMap(m *ebpf.Map, ncpu int) *aggMap {
	shared := m.Type() != ebpf.PerCPUHash
	if shared {
		// A map the CPUs share (bpf.Layout's big quantizations) holds
		// one value a key, read as the first CPU's, by iterating:
		// its keys are few and its values large.
		ncpu = 1
	}
	valSize := int(m.ValueSize())
	a := &aggMap{
		m:       m,
		ncpu:    ncpu,
		keySize: int(m.KeySize()),
		valSize: valSize,
		stride:  ncpu * ((valSize + 7) &^ 7),
		slot:    map[string]int{},
	}
	a.batch = min(4096, max(64, aggBatchBytes/a.stride))
	a.noBatch = shared
	return a
}

// each calls fn with every key of the map and its value on every CPU,
// both valid until fn returns.
func (a *aggMap) each(fn func(key, vals []byte)) error {
	if !a.noBatch {
		err := a.eachBatch(fn)
		if !errors.Is(err, ebpf.ErrNotSupported) {
			return err
		}
		a.noBatch = true
	}
	var key, val []byte
	var vals [][]byte
	it := a.m.Iterate()
	flat := make([]byte, a.stride)
	if a.m.Type() != ebpf.PerCPUHash {
		for it.Next(&key, &val) {
			copy(flat, val)
			fn(key, flat)
		}
		return it.Err()
	}
	for it.Next(&key, &vals) {
		for cpu, v := range vals {
			copy(flat[cpu*a.stride/a.ncpu:], v)
		}
		fn(key, flat)
	}
	return it.Err()
}

// eachBatch is each through batch lookups. It returns
// ebpf.ErrNotSupported before calling fn if the kernel has none.
func (a *aggMap) eachBatch(fn func(key, vals []byte)) error {
	var cursor ebpf.MapBatchCursor
	for {
		if !a.keys.IsValid() || a.keys.Len() != a.batch {
			a.keys = reflect.MakeSlice(reflect.SliceOf(reflect.ArrayOf(a.keySize, reflect.TypeFor[byte]())), a.batch, a.batch)
			a.vals = make([]byte, a.batch*a.stride)
		}
		// keys and vals are the syscall's own buffers, of the sizes
		// cilium/ebpf reads them in place for (no copy, no per-entry
		// decoding).
		n, err := a.m.BatchLookup(&cursor, a.keys.Interface(), a.vals, nil)
		if errors.Is(err, unix.ENOSPC) {
			// A hash bucket holds more entries than a batch; the
			// cursor stays on it.
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

// snap appends to bufs[cpu] each entry whose data changed on that CPU
// since the last snapshot, as what changed (appendDelta), in the
// kernel's layout of an aggregation buffer. fns gives the aggregating
// function of each aggregation ID.
func (a *aggMap) snap(bufs [][]byte, fns map[uint32]aggFn) error {
	per := a.stride / a.ncpu
	err := a.each(func(key, vals []byte) {
		i, seen := a.slot[string(key)]
		var prev []byte
		if seen {
			prev = a.prev[i*a.stride : (i+1)*a.stride]
			if bytes.Equal(prev, vals) {
				return
			}
		}
		fn := fns[binary.LittleEndian.Uint32(key)]
		for cpu := range a.ncpu {
			v := vals[cpu*per : cpu*per+a.valSize]
			var p []byte
			if seen {
				p = prev[cpu*per : cpu*per+a.valSize]
			}
			if !changed(v, p) {
				continue
			}
			b := appendKey(bufs[cpu], key)
			bufs[cpu] = appendDelta(b, fn, v, p)
		}
		if seen {
			copy(prev, vals)
			return
		}
		a.slot[string(key)] = len(a.prev) / a.stride
		a.prev = append(a.prev, vals...)
	})
	if err != nil {
		return fmt.Errorf("reading an aggregation map: %w", err)
	}
	return nil
}

// changed reports whether a CPU's value v of an entry has news since
// prev (nil: none before): it differs, and the entry's AggTouched word
// says the CPU aggregated the key.
func changed(v, prev []byte) bool {
	if prev != nil && bytes.Equal(prev, v) {
		return false
	}
	return binary.LittleEndian.Uint64(v[len(v)-bpf.AggTouched:]) != 0
}

// appendKey appends an entry's key (the aggregation's ID first) to an
// aggregation buffer, on 8 bytes as the kernel places entries.
func appendKey(buf, key []byte) []byte {
	for len(buf)%8 != 0 {
		buf = binary.LittleEndian.AppendUint32(buf, record.AggIDNone)
	}
	return append(buf, key...)
}

// appendDelta appends what a CPU's value v of an entry gained since
// prev (nil: none before) to buf: min and max as values, the other
// functions' words less their previous values (stddev's 128-bit sum of
// squares with its borrow), lquantize's and llquantize's parameters
// as the aggregation has them.
func appendDelta(buf []byte, f aggFn, v, prev []byte) []byte {
	v = v[:len(v)-bpf.AggTouched]
	start := len(buf)
	buf = append(buf, v...)
	d := buf[start:]
	w := func(b []byte, i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	fn := f.fn
	switch fn {
	case dof.AggMin, dof.AggMax:
		binary.LittleEndian.PutUint64(d, uint64(bpf.MinMaxValue(fn, w(v, 0))))
		return buf
	case dof.AggLQuantize, dof.AggLLQuantize:
		// Only the CPU that made a per-CPU hash entry has them: the
		// kernel zeroes the others' values, which another CPU's firing
		// then finds and counts in.
		binary.LittleEndian.PutUint64(d, f.arg)
	}
	if prev == nil {
		return buf
	}
	first := 0
	if fn == dof.AggLQuantize || fn == dof.AggLLQuantize {
		first = 1
	}
	for i := first; i < len(v)/8; i++ {
		if fn == dof.AggStddev && i == 2 {
			lo, borrow := bits.Sub64(w(v, 2), w(prev, 2), 0)
			hi, _ := bits.Sub64(w(v, 3), w(prev, 3), borrow)
			binary.LittleEndian.PutUint64(d[16:], lo)
			binary.LittleEndian.PutUint64(d[24:], hi)
			break
		}
		binary.LittleEndian.PutUint64(d[8*i:], w(v, i)-w(prev, i))
	}
	return buf
}
