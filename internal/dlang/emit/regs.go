package emit

import "github.com/kdtrace/kdtrace/dlang/diag"

// regset hands out DIF's integer registers as dt_regset does: %r0
// always reads zero, so %r1 to %r7 are free for values. Where dtrace
// gives up with D_NOREG, kdtrace spills (see gen.hold).
type regset struct {
	used [8]bool
	g    *gen
}

func (r *regset) alloc() uint8 {
	for i := 1; i < len(r.used); i++ {
		if !r.used[i] {
			r.used[i] = true
			return uint8(i)
		}
	}
	r.g.fail(diag.D_NOREG, "Insufficient registers to generate code")
	return 0
}

func (r *regset) free(reg uint8) {
	if reg != 0 {
		r.used[reg] = false
	}
}

// free counts the registers left.
func (r *regset) nfree() int {
	n := 0
	for i := 1; i < len(r.used); i++ {
		if !r.used[i] {
			n++
		}
	}
	return n
}
