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
// ready to use; the DIFOs it returns must not be changed.
type Pool struct {
	seed maphash.Seed
	m    map[uint64]*DIFO
	buf  []byte
}

// Intern returns the DIFO of the pool equal to d, or adds a copy of d,
// with tables of its own, and returns it. It keeps nothing of d, whose
// tables the caller may fill again for the next DIFO: a program whose
// DIFOs are mostly alike so allocates only the ones that differ.
func (p *Pool) Intern(d *DIFO) *DIFO {
	if p.m == nil {
		p.seed = maphash.MakeSeed()
		p.m = make(map[uint64]*DIFO)
	}
	h := p.hash(d)
	o, ok := p.m[h]
	if ok && sameDIFO(o, d) {
		return o
	}
	c := d.clone()
	if !ok {
		p.m[h] = c
	}
	return c // on a collision, c is kept and not shared
}

// clone returns a copy of d with tables of its own; empty tables are
// nil, as a DIFO made for itself has them.
func (d *DIFO) clone() *DIFO {
	c := *d
	c.Code, c.Ints, c.Strs = own(d.Code), own(d.Ints), own(d.Strs)
	c.Vars, c.XlRefs, c.KRelo, c.URelo = own(d.Vars), own(d.XlRefs), own(d.KRelo), own(d.URelo)
	return &c
}

// own returns a copy of s, nil if s is empty.
func own[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
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
