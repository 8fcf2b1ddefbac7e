package dof

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"slices"
)

// A Pool shares equal DIFOs. The clauses of a large program compute the
// same values again and again (execname as an aggregation key, an
// aggregation's identifier, a variable's reset to 0): a program that
// keeps one copy of each until its DOF is written takes a fraction of
// the memory. Write still writes each use as a DIFO of its own, as
// dtrace does, so sharing changes nothing in the file. The zero Pool is
// ready to use; DIFOs given to it must not be changed after.
type Pool struct {
	seed maphash.Seed
	m    map[uint64]*DIFO
	buf  []byte
}

// Intern returns the DIFO of the pool equal to d, or adds d and returns
// it.
func (p *Pool) Intern(d *DIFO) *DIFO {
	if p.m == nil {
		p.seed = maphash.MakeSeed()
		p.m = make(map[uint64]*DIFO)
	}
	h := p.hash(d)
	if o, ok := p.m[h]; ok {
		if sameDIFO(o, d) {
			return o
		}
		return d // a collision: d is kept, not shared
	}
	p.m[h] = d
	return d
}

func (p *Pool) hash(d *DIFO) uint64 {
	b := d.Ret.Append(p.buf[:0])
	b = binary.AppendUvarint(b, uint64(len(d.Code)))
	for _, in := range d.Code {
		b = le.AppendUint32(b, in)
	}
	b = binary.AppendUvarint(b, uint64(len(d.Ints)))
	for _, v := range d.Ints {
		b = le.AppendUint64(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(d.Strs)))
	b = append(b, d.Strs...)
	b = binary.AppendUvarint(b, uint64(len(d.Vars)))
	for i := range d.Vars {
		b = d.Vars[i].Append(b)
	}
	b = binary.AppendUvarint(b, uint64(len(d.XlRefs)))
	for i := range d.XlRefs {
		b = d.XlRefs[i].Append(b)
	}
	for _, rels := range [][]RelDesc{d.KRelo, d.URelo} {
		b = binary.AppendUvarint(b, uint64(len(rels)))
		for i := range rels {
			b = rels[i].Append(b)
		}
	}
	p.buf = b
	return maphash.Bytes(p.seed, b)
}

// sameDIFO reports whether d and o are the same DIFO: the same code,
// tables and return type. (An Equal method would change what go-cmp
// compares.)
func sameDIFO(d, o *DIFO) bool {
	return d.Ret == o.Ret &&
		slices.Equal(d.Code, o.Code) &&
		slices.Equal(d.Ints, o.Ints) &&
		bytes.Equal(d.Strs, o.Strs) &&
		slices.Equal(d.Vars, o.Vars) &&
		slices.Equal(d.XlRefs, o.XlRefs) &&
		slices.Equal(d.KRelo, o.KRelo) &&
		slices.Equal(d.URelo, o.URelo)
}
