package amd64

import "fmt"

// Refused reports why FreeBSD's kinst will not probe the instruction that
// starts at addr, or returns nil if it will. kinst skips popf and sti,
// which change the interrupt flag its int3 handler relies on, and refuses
// jrcxz, which has no rel32 form to relocate into a trampoline (and
// aborts the probes of the whole function).
func (f *Function) Refused(addr uint64) error {
	i, ok := f.instAt(addr)
	if !ok || f.Insts[i].Op == Data {
		return fmt.Errorf("amd64: no instruction starts at %#x", addr)
	}
	p, _ := f.part(addr)
	b := p.Code[addr-p.Addr : f.Insts[i].End()-p.Addr]
	for len(b) > 1 && (isLegacyPrefix(b[0]) || b[0]&0xf0 == 0x40) {
		b = b[1:]
	}
	switch b[0] {
	case 0x9d:
		return fmt.Errorf("kinst does not probe popf (at %#x)", addr)
	case 0xfb:
		return fmt.Errorf("kinst does not probe sti (at %#x)", addr)
	case 0xe3:
		return fmt.Errorf("kinst refuses jrcxz (at %#x), and with it every probe in the function", addr)
	}
	return nil
}

// ProbeAt returns where a probe that fires as one at addr would can go:
// addr itself, unless the instruction there carries a prefix Linux's
// uprobes refuse (the es, cs, ss and ds segment overrides, and lock),
// as the cs nopw of alignment padding does. Then it is another
// instruction of the same basic block, which runs exactly when addr's
// does, the next ones first; or, for a block of nothing else, one of
// the block that alone leads into it and leads nowhere else. With no
// such instruction it returns addr.
func (f *Function) ProbeAt(addr uint64) uint64 {
	i, ok := f.instAt(addr)
	if !ok || !f.badPrefix(i) {
		return addr
	}
	b := f.Blocks[f.blockOf[i]]
	if j, ok := f.cleanIn(b, i); ok {
		return f.Insts[j].Addr
	}
	if len(b.Preds) == 1 && len(b.Preds[0].Succs) == 1 && b != f.entry {
		if j, ok := f.cleanIn(b.Preds[0], b.Preds[0].first+len(b.Preds[0].Insts)-1); ok {
			return f.Insts[j].Addr
		}
	}
	return addr
}

// cleanIn returns an instruction of block b that carries no prefix
// uprobes refuse, looking from instruction i forward, then backward.
func (f *Function) cleanIn(b *block, i int) (int, bool) {
	for j := i; j < b.first+len(b.Insts); j++ {
		if !f.badPrefix(j) {
			return j, true
		}
	}
	for j := i - 1; j >= b.first; j-- {
		if !f.badPrefix(j) {
			return j, true
		}
	}
	return 0, false
}

// UprobeRefused reports whether the instruction at addr carries a
// prefix Linux's uprobes refuse (see UprobeRefusedPrefix).
func (f *Function) UprobeRefused(addr uint64) bool {
	i, ok := f.instAt(addr)
	return ok && f.badPrefix(i)
}

// badPrefix reports whether instruction i carries a prefix uprobes
// refuse.
func (f *Function) badPrefix(i int) bool {
	in := f.Insts[i]
	if in.Op == Data {
		return false
	}
	p, _ := f.part(in.Addr)
	_, bad := UprobeRefusedPrefix(p.Code[in.Addr-p.Addr : in.End()-p.Addr])
	return bad
}

// UprobeRefusedPrefix returns the legacy prefix of the instruction at
// the start of code that Linux's uprobes refuse to probe (with
// EOPNOTSUPP): the es, cs, ss and ds segment overrides and lock.
func UprobeRefusedPrefix(code []byte) (byte, bool) {
	for _, c := range code {
		switch {
		case c == 0x26 || c == 0x2e || c == 0x36 || c == 0x3e || c == 0xf0:
			return c, true
		case !isLegacyPrefix(c):
			return 0, false
		}
	}
	return 0, false
}
