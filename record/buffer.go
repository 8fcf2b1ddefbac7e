package record

import (
	"encoding/binary"
	"fmt"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
)

// A Value is what one action produced in a firing.
type Value struct {
	// Int is a value returned in a register: an integer, an address for
	// sym(), usym() and the like, exit()'s status, tracemem()'s dynamic
	// size.
	Int uint64
	// Ref is the memory a by-reference value refers to (a string, a
	// structure, tracemem()'s bytes), as much of it as the record holds
	// or up to a string's NUL. For stack() and ustack() it is the
	// record's bytes as the kernel fills them: 64-bit program counters
	// (ustack(): the pid first), zero after the last frame.
	Ref []byte
	// PID is the firing process's pid, which usym(), umod() and uaddr()
	// record before the address.
	PID uint64
}

// A CPUBuffer is one CPU's buffer as a backend snapshots it and hands
// it to a consumer (dtrace_bufdesc_t): the records Buffer wrote, and
// the firings that found it full and were dropped.
type CPUBuffer struct {
	CPU   int
	Data  []byte
	Drops uint64
}

// A Buffer is one CPU's principal buffer under the switch policy: what
// dtrace_probe writes and DTRACEIOC_BUFSNAP hands the consumer.
type Buffer struct {
	data  []byte
	off   int
	drops uint64
}

// NewBuffer returns an empty buffer of size bytes (the bufsize option).
func NewBuffer(size int) *Buffer { return &Buffer{data: make([]byte, size)} }

// Bytes returns the records written since the last Reset.
func (b *Buffer) Bytes() []byte { return b.data[:b.off] }

// Drops returns the firings dropped for want of room since the last
// Reset (dtbd_drops).
func (b *Buffer) Drops() uint64 { return b.drops }

// Reset empties the buffer, as switching it does.
func (b *Buffer) Reset() { b.off, b.drops = 0, 0 }

// Write records one firing of ep at time ts (nanoseconds), with vals
// the values of its actions in order (len(vals) == len(ep.Actions);
// the values of actions that record nothing are not looked at). As
// dtrace_buffer_reserve and dtrace_probe do, it pads the buffer with
// DTRACE_EPIDNONE words to the ECB's alignment, reserves the ECB's
// needed size or drops the firing, then writes the header and each
// record at its offset. It reports whether the firing was recorded;
// an error is a value that does not fit its record.
func (b *Buffer) Write(ep *EProbe, ts uint64, vals []Value) (bool, error) {
	if len(vals) != len(ep.Actions) {
		return false, fmt.Errorf("record: EPID %d has %d actions, got %d values", ep.EPID, len(ep.Actions), len(vals))
	}
	off := b.off
	for ; off%int(ep.Alignment) != 0; off += EPIDSize {
		if off+EPIDSize > len(b.data) {
			break
		}
		binary.LittleEndian.PutUint32(b.data[off:], EPIDNone)
	}
	if off+int(ep.Needed) > len(b.data) {
		b.drops++
		return false, nil
	}
	rec := b.data[off : off+int(ep.Size)]
	clear(rec)
	if ep.Size != 0 {
		PutHeader(rec, ep.EPID, ts)
	}
	if err := ep.encode(rec, vals); err != nil {
		// The buffer is left as it was, as a fault leaves it.
		return false, err
	}
	b.off = off + int(ep.Size)
	return true, nil
}

// PutHeader writes a dtrace_rechdr_t: the EPID, then the timestamp's
// high and low 32-bit halves (DTRACE_RECORD_STORE_TIMESTAMP).
func PutHeader(b []byte, epid uint32, ts uint64) {
	binary.LittleEndian.PutUint32(b, epid)
	binary.LittleEndian.PutUint32(b[4:], uint32(ts>>32))
	binary.LittleEndian.PutUint32(b[8:], uint32(ts))
}

// encode writes the records of one firing into rec, which is the
// firing's Size bytes.
func (ep *EProbe) encode(rec []byte, vals []Value) error {
	var dynsize uint64 // tracemem()'s size from the action before
	for i := range ep.Actions {
		a := &ep.Actions[i]
		v := &vals[i]
		if a.IsAgg() || a.InTuple || a.Size == 0 {
			continue
		}
		if err := a.encode(rec[a.Offset:a.Offset+a.Size], v, &dynsize, i); err != nil {
			return err
		}
	}
	return nil
}

// encode writes the action's value v into its record dst; dynsize is
// tracemem()'s size from the action before, i the action's index.
func (a *Action) encode(dst []byte, v *Value, dynsize *uint64, i int) error {
	switch a.Action {
	case dof.ActStack, dof.ActUStack, dof.ActJStack:
		if len(v.Ref) > len(dst) {
			return fmt.Errorf("record: action #%d: %d bytes of stack for a %d-byte record", i+1, len(v.Ref), len(dst))
		}
		copy(dst, v.Ref)
		return nil
	case dof.ActUSym, dof.ActUMod, dof.ActUAddr:
		binary.LittleEndian.PutUint64(dst, v.PID)
		binary.LittleEndian.PutUint64(dst[8:], v.Int)
		return nil
	case dof.ActPrintm:
		// The size, then the memory (a memref).
		if uint64(len(v.Ref))+8 > uint64(len(dst)) {
			return fmt.Errorf("record: action #%d: %d bytes for a %d-byte printm record", i+1, len(v.Ref), len(dst))
		}
		binary.LittleEndian.PutUint64(dst, uint64(len(v.Ref)))
		copy(dst[8:], v.Ref)
		return nil
	case dof.ActTraceMemDynSize:
		*dynsize = v.Int
	}
	switch {
	case a.Type.Kind == dif.TypeString:
		// Up to the NUL, then zeroes (dtrace_store_by_ref).
		for j := 0; j < len(dst) && j < len(v.Ref) && v.Ref[j] != 0; j++ {
			dst[j] = v.Ref[j]
		}
	case a.Type.ByRef():
		n := len(dst)
		if a.Action == dof.ActTraceMem && *dynsize != 0 && *dynsize < uint64(n) {
			n, *dynsize = int(*dynsize), 0
		}
		if len(v.Ref) < n {
			return fmt.Errorf("record: action #%d: %d bytes for a %d-byte record", i+1, len(v.Ref), n)
		}
		copy(dst, v.Ref[:n])
	default:
		switch a.Size {
		case 1:
			dst[0] = byte(v.Int)
		case 2:
			binary.LittleEndian.PutUint16(dst, uint16(v.Int))
		case 4:
			binary.LittleEndian.PutUint32(dst, uint32(v.Int))
		case 8:
			binary.LittleEndian.PutUint64(dst, v.Int)
		default:
			return fmt.Errorf("record: action #%d: a %d-byte value returned by value", i+1, a.Size)
		}
	}
	return nil
}
