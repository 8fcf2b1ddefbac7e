package bpf

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Runtime holds the maps translated DIFOs share: the state each leaves
// per CPU, the variables and the string tables of a Layout.
type Runtime struct {
	State, Globals, Locals, Threads, Strings, Scratch, StrBuf *ebpf.Map
}

// NewRuntime makes the maps for the DIFOs added to l and fills the
// string map. Close releases them.
func NewRuntime(l *Layout) (*Runtime, error) {
	specs := []*ebpf.MapSpec{
		{Name: MapState, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: StateSize, MaxEntries: 1},
		{Name: MapGlobals, Type: ebpf.Array, KeySize: 4, ValueSize: l.globalsSize(), MaxEntries: 1},
		{Name: MapLocals, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: l.localsSize(), MaxEntries: 1},
		{Name: MapThreads, Type: ebpf.Hash, KeySize: 16, ValueSize: 8, MaxEntries: l.threads},
		{Name: MapStrings, Type: ebpf.Array, KeySize: 4, ValueSize: uint32(max(8, (len(l.strs)+7)&^7)), MaxEntries: 1},
		{Name: MapScratch, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 2 * l.scratch, MaxEntries: 1},
		{Name: MapStrBuf, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 2 * l.strBufHalf(), MaxEntries: 1},
	}
	var maps [7]*ebpf.Map
	r := &Runtime{}
	for i, spec := range specs {
		m, err := ebpf.NewMap(spec)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("bpf: creating map %s: %w", spec.Name, err)
		}
		maps[i] = m
		r.State, r.Globals, r.Locals, r.Threads, r.Strings, r.Scratch, r.StrBuf = maps[0], maps[1], maps[2], maps[3], maps[4], maps[5], maps[6]
	}
	strs := make([]byte, specs[4].ValueSize)
	copy(strs, l.strs)
	if err := r.Strings.Put(uint32(0), strs); err != nil {
		r.Close()
		return nil, fmt.Errorf("bpf: filling the string map: %w", err)
	}
	return r, nil
}

// Close releases the maps.
func (r *Runtime) Close() error {
	var errs []error
	for _, m := range []*ebpf.Map{r.State, r.Globals, r.Locals, r.Threads, r.Strings, r.Scratch, r.StrBuf} {
		if m != nil {
			errs = append(errs, m.Close())
		}
	}
	return errors.Join(errs...)
}

// Load associates insns with the runtime's maps and loads them as a
// raw tracepoint program. A verifier refusal carries the verifier's log
// (ebpf.VerifierError).
func (r *Runtime) Load(name string, insns asm.Instructions) (*ebpf.Program, error) {
	insns = append(asm.Instructions(nil), insns...)
	for _, m := range []struct {
		name string
		m    *ebpf.Map
	}{{MapState, r.State}, {MapGlobals, r.Globals}, {MapLocals, r.Locals}, {MapThreads, r.Threads}, {MapStrings, r.Strings}, {MapScratch, r.Scratch}, {MapStrBuf, r.StrBuf}} {
		if err := insns.AssociateMap(m.name, m.m); err != nil && !errors.Is(err, asm.ErrUnreferencedSymbol) {
			return nil, fmt.Errorf("bpf: %w", err)
		}
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         name,
		Type:         ebpf.RawTracepoint,
		Instructions: insns,
		License:      "GPL", // bpf_probe_read_kernel is GPL-only
	})
	if err != nil {
		return nil, fmt.Errorf("bpf: loading %s: %w", name, err)
	}
	return prog, nil
}

// State is what a translated DIFO left on one CPU.
type State struct {
	Ret       uint64
	Fault     uint64 // DTRACEFLT_* code, 0 if the DIFO returned
	FaultPC   uint64 // index of the faulting DIF instruction
	FaultAddr uint64
	Drops     uint64
	StrBase   uint64 // address of the string map's value
	Scratch   uint64 // bytes of scratch allocated
	ScrBase   uint64 // address of this CPU's scratch
}

// ReadState returns the state the last DIFO run on cpu left.
func (r *Runtime) ReadState(cpu int) (State, error) {
	var vals [][]byte
	if err := r.State.Lookup(uint32(0), &vals); err != nil {
		return State{}, fmt.Errorf("bpf: reading the state map: %w", err)
	}
	if cpu < 0 || cpu >= len(vals) {
		return State{}, fmt.Errorf("bpf: no CPU %d", cpu)
	}
	b := vals[cpu]
	u := func(off int) uint64 { return binary.NativeEndian.Uint64(b[off:]) }
	return State{Ret: u(StateRet), Fault: u(StateFault), FaultPC: u(StateFaultPC),
		FaultAddr: u(StateFaultAddr), Drops: u(StateDrops), StrBase: u(StateStrBase),
		Scratch: u(StateScratch), ScrBase: u(StateScrBase)}, nil
}

// BeginFiring starts a probe firing on every CPU as kernel/vm's
// BeginFiring does: clause-locals and scratch memory zeroed, no scratch
// allocated. The clause programs will do it in BPF.
func (r *Runtime) BeginFiring() error {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	zero := func(m *ebpf.Map) error {
		vals := make([][]byte, n)
		for i := range vals {
			vals[i] = make([]byte, m.ValueSize())
		}
		return m.Put(uint32(0), vals)
	}
	if err := zero(r.Locals); err != nil {
		return fmt.Errorf("bpf: zeroing clause-locals: %w", err)
	}
	if err := zero(r.Scratch); err != nil {
		return fmt.Errorf("bpf: zeroing scratch: %w", err)
	}
	var vals [][]byte
	if err := r.State.Lookup(uint32(0), &vals); err != nil {
		return fmt.Errorf("bpf: reading the state map: %w", err)
	}
	for _, v := range vals {
		binary.NativeEndian.PutUint64(v[StateScratch:], 0)
	}
	if err := r.State.Put(uint32(0), vals); err != nil {
		return fmt.Errorf("bpf: writing the state map: %w", err)
	}
	return nil
}
