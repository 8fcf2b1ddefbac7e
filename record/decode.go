package record

import (
	"encoding/binary"
	"fmt"
)

// A Describer gives the descriptions a consumer asks the kernel for:
// DTRACEIOC_EPROBE, DTRACEIOC_AGGDESC, DTRACEIOC_FORMAT, and the probes'
// names (DTRACEIOC_PROBES). Layout is one; on FreeBSD it is the ioctls.
type Describer interface {
	EProbe(epid uint32) (*EProbe, error)
	Agg(id uint32) (*AggDesc, error)
	Format(n uint16) (string, error)
	Probe(id uint32) (Probe, error)
}

// A Firing is one firing of an enabled probe as a buffer holds it.
type Firing struct {
	EProbe    *EProbe
	Timestamp uint64
	// Data is the firing's EProbe.Size bytes, from its header; a
	// record's bytes are Data[rec.Offset:][:rec.Size].
	Data []byte
	// Offset is where the firing starts in the buffer.
	Offset int
}

// Rec returns the bytes of the firing's record i (of EProbe.Recs).
func (f *Firing) Rec(i int) []byte {
	r := &f.EProbe.Recs[i]
	return f.Data[r.Offset : r.Offset+r.Size]
}

// A DecodeError is a buffer that does not hold what its descriptions
// say.
type DecodeError struct {
	Offset int
	Reason string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("record: buffer offset %d: %s", e.Offset, e.Reason)
}

// Next returns the firing at offset off of a buffer, or after the
// padding there, and the offset after it, as dt_consume_cpu walks a
// buffer: a DTRACE_EPIDNONE word is padding, anything else starts a
// firing of the enabled probe it names, which takes the probe's Size
// bytes. At the buffer's end the firing's EProbe is nil. A consumer
// walks a buffer of a million firings with it without holding them
// all.
func Next(buf []byte, off int, d Describer) (Firing, int, error) {
	for off < len(buf) {
		if off+EPIDSize > len(buf) {
			return Firing{}, off, &DecodeError{off, "truncated EPID"}
		}
		epid := binary.LittleEndian.Uint32(buf[off:])
		if epid == EPIDNone {
			off += EPIDSize
			continue
		}
		ep, err := d.EProbe(epid)
		if err != nil {
			return Firing{}, off, &DecodeError{off, err.Error()}
		}
		if ep.Size < RecHdrSize {
			return Firing{}, off, &DecodeError{off, fmt.Sprintf("EPID %d records nothing, yet is in the buffer", epid)}
		}
		if off+int(ep.Size) > len(buf) {
			return Firing{}, off, &DecodeError{off, fmt.Sprintf("EPID %d needs %d bytes, %d left", epid, ep.Size, len(buf)-off)}
		}
		data := buf[off : off+int(ep.Size)]
		for i := range ep.Recs {
			r := &ep.Recs[i]
			if uint64(r.Offset)+uint64(r.Size) > uint64(ep.Size) {
				return Firing{}, off, &DecodeError{off, fmt.Sprintf("EPID %d record #%d lies beyond the firing", epid, i+1)}
			}
		}
		ts := uint64(binary.LittleEndian.Uint32(data[4:]))<<32 | uint64(binary.LittleEndian.Uint32(data[8:]))
		return Firing{EProbe: ep, Timestamp: ts, Data: data, Offset: off}, off + int(ep.Size), nil
	}
	return Firing{}, len(buf), nil
}
