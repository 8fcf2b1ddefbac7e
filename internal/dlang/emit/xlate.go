package emit

import (
	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// xlateNeedsCopy reports whether a translator's value of type vt for a
// member of type mt must be copied to be read as the member: a string
// for an array, or a value of another size, whose bytes the member's
// would not match (an array of 16 bytes read as one of 80 reads past
// its end).
func (g *gen) xlateNeedsCopy(mt, vt types.Type) bool {
	return typedRef(mt) && (types.IsString(mt) != types.IsString(vt) || g.size(mt) != g.size(vt))
}

// xlateCopy copies the value in r, of type vt, that a translator gives
// a member of type mt (an array, struct or string) into dst, the
// member's zeroed bytes. It copies no more than the value holds: a
// string up to its NUL, else its type's size; and a string into an
// array at most one byte less than the array, which so ends in a NUL.
// (dt_cg_xlate_member copies the member's size whatever the value's,
// reading past a shorter value.)
func (g *gen) xlateCopy(mt, vt types.Type, r, dst uint8) {
	size := g.size(mt)
	if !types.IsString(vt) {
		n := g.setInt(uint64(min(size, g.size(vt))))
		g.ir.Emit(dif.Copys(r, n, dst))
		g.regs.free(n)
		return
	}
	// strlen(value), then at most size-1.
	n := g.setInt(uint64(g.strsize))
	g.ir.Emit(dif.Instr(dif.FLUSHTS) << 24)
	g.ir.Emit(dif.Pushtr(dif.TypeString, n, r))
	g.ir.Emit(dif.Call(dif.SubrStrlen, n))
	most := g.setInt(uint64(size - 1))
	fits := g.ir.NewLabel()
	g.ir.Emit(dif.Cmp(dif.CMP, n, most))
	g.ir.Branch(dif.BLEU, fits)
	g.ir.Emit(dif.Mov(most, n))
	g.ir.Mark(fits)
	g.regs.free(most)
	// bcopy(value, dst, n): copys takes only a constant size.
	g.ir.Emit(dif.Instr(dif.FLUSHTS) << 24)
	for _, a := range []uint8{r, dst, n} {
		g.ir.Emit(dif.Pushtv(dif.TypeCTF, a))
	}
	g.ir.Emit(dif.Call(dif.SubrBcopy, n))
	g.regs.free(n)
}

// xlateValue returns the value in r, of type vt, as a translator's
// member of type mt is read: r itself, or where the two differ
// (xlateNeedsCopy) a copy in the member's own zeroed scratch.
func (g *gen) xlateValue(mt, vt types.Type, r uint8) uint8 {
	if !g.xlateNeedsCopy(mt, vt) {
		return r
	}
	size := g.setInt(uint64(g.size(mt)))
	buf := g.regs.alloc()
	g.ir.Emit(dif.Allocs(size, buf))
	g.regs.free(size)
	g.xlateCopy(mt, vt, r, buf)
	g.regs.free(r)
	return buf
}
