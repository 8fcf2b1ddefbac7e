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
