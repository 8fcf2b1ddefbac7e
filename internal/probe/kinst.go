package probe

import (
	"fmt"
	"strconv"

	"github.com/kdtrace/kdtrace/internal/amd64"
	"github.com/kdtrace/kdtrace/internal/ksym"
)

// kinstProvider is the kinst provider: kinst:module:function:offset, a
// probe at any instruction of a kernel function, with no typed
// arguments. As on FreeBSD, probes are made on demand: the function must
// be named literally, and the name is a decimal offset, or empty or a
// glob for every instruction of the function. Offsets come from the
// function's code (an offline image's, or the running kernel's through
// its symbol table and /proc/kcore); a catalog with no way to read code
// (FreeBSD's, for now) yields the entry, offset 0, alone. A literal
// offset is taken as given: the kinst rewrite checks that it is an
// instruction boundary.
type kinstProvider struct{ k *kernel }

func (*kinstProvider) Name() string           { return "kinst" }
func (*kinstProvider) Attributes() attributes { return kernelAttr }

func (p *kinstProvider) Probes(q *query, yield func(*Probe) bool) error {
	if prov, ok := q.Provider.Literal(); !ok || prov != "kinst" {
		// dtrace asks the kinst device for probes only when a
		// description names the provider: kinst probes exist only once
		// made, so ::vfs_read: or *::: matches none.
		return nil
	}
	if _, ok := q.Function.Literal(); !ok {
		// The kernel compares the function with strcmp: a glob or an
		// empty function makes no probe.
		return nil
	}
	name, literal := q.Name.Literal()
	var off uint64
	if literal {
		// KINSTIOC_MAKEPROBE reads the offset with strtol; the probe
		// it makes is named by %d, which the description must match.
		n, err := strconv.ParseUint(name, 10, 31)
		if err != nil || strconv.FormatUint(n, 10) != name {
			return nil
		}
		off = n
	}
	var err error
	_, werr := p.k.walkFuncs(q, func(l *funcList, i int) bool {
		fn := l.name(i)
		var r symRange
		if l.syms != nil {
			r = l.syms[i]
		}
		mk := func(off uint64) *Probe {
			return &Probe{Provider: "kinst", Module: l.module, Function: fn, Name: strconv.FormatUint(off, 10),
				Detail: &KernelSite{Module: l.module, Function: fn, Offset: off, Addr: r.addr, Size: r.size}}
		}
		if literal {
			if r.size != 0 && off >= r.size {
				return true
			}
			return yield(mk(off))
		}
		offs, e := p.offsets(l, i)
		if e != nil {
			err = e
			return false
		}
		for _, o := range offs {
			if q.Name.Match(strconv.FormatUint(o, 10)) && !yield(mk(o)) {
				return false
			}
		}
		return true
	})
	if werr != nil {
		return werr
	}
	return err
}

// offsets returns the instruction boundaries of function i of l: every
// instruction's offset but traps' when the code can be read, else the
// entry only.
func (p *kinstProvider) offsets(l *funcList, i int) ([]uint64, error) {
	if p.k.code == nil {
		return []uint64{0}, nil
	}
	addr, code, err := p.k.code(l, i)
	if err != nil {
		return nil, err
	}
	if code == nil {
		return []uint64{0}, nil
	}
	insts, err := amd64.Decode(code, addr)
	if err != nil {
		return nil, err
	}
	offs := make([]uint64, 0, len(insts))
	for _, in := range insts {
		// Traps are left out: the kernel refuses a kprobe on int3 (the
		// padding after a patched return, or another debugger's
		// breakpoint) and on BUG()'s ud2, and neither falls through.
		if in.Op != amd64.Data && in.Op != amd64.Trap && in.Addr >= addr && in.Addr < addr+uint64(len(code)) {
			offs = append(offs, in.Addr-addr)
		}
	}
	return offs, nil
}

// symbolCode reads the code of function fn of module from a kernel's
// symbol table, for kinst's offsets where there is no image to read.
func symbolCode(syms func() (*ksym.Table, error), module, fn string) (uint64, []byte, error) {
	tab, err := syms()
	if err != nil {
		return 0, nil, fmt.Errorf("cannot list the instructions of %s: %w", fn, err)
	}
	ss, err := tab.Lookup(module, fn)
	if err != nil {
		return 0, nil, fmt.Errorf("cannot list the instructions of %s: the symbol table lacks it: %w", fn, err)
	}
	for _, s := range ss {
		if s.Func {
			code, err := tab.Code(s)
			if err != nil {
				return 0, nil, fmt.Errorf("cannot list the instructions of %s: reading its code: %w", fn, err)
			}
			return s.Addr, code, nil
		}
	}
	return 0, nil, fmt.Errorf("cannot list the instructions of %s: the symbol table has no function of that name", fn)
}
