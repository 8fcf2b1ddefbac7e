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
	State, Globals, Locals, Threads, Strings *ebpf.Map
}

// Config sizes a Runtime.
type Config struct {
	// Threads is the number of thread-local variables the thread map
	// holds (dtrace's dynvarsize decides it); 0 means 4096.
	Threads uint32
}

// NewRuntime makes the maps for the DIFOs added to l and fills the
// string map. Close releases them.
func NewRuntime(l *Layout, cfg *Config) (*Runtime, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	threads := cfg.Threads
	if threads == 0 {
		threads = 4096
	}
	specs := []*ebpf.MapSpec{
		{Name: MapState, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: StateSize, MaxEntries: 1},
		{Name: MapGlobals, Type: ebpf.Array, KeySize: 4, ValueSize: l.globalsSize(), MaxEntries: 1},
		{Name: MapLocals, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: l.localsSize(), MaxEntries: 1},
		{Name: MapThreads, Type: ebpf.Hash, KeySize: 16, ValueSize: 8, MaxEntries: threads},
		{Name: MapStrings, Type: ebpf.Array, KeySize: 4, ValueSize: uint32(max(8, (len(l.strs)+7)&^7)), MaxEntries: 1},
	}
	var maps [5]*ebpf.Map
	r := &Runtime{}
	for i, spec := range specs {
		m, err := ebpf.NewMap(spec)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("bpf: creating map %s: %w", spec.Name, err)
		}
		maps[i] = m
		r.State, r.Globals, r.Locals, r.Threads, r.Strings = maps[0], maps[1], maps[2], maps[3], maps[4]
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
	for _, m := range []*ebpf.Map{r.State, r.Globals, r.Locals, r.Threads, r.Strings} {
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
	}{{MapState, r.State}, {MapGlobals, r.Globals}, {MapLocals, r.Locals}, {MapThreads, r.Threads}, {MapStrings, r.Strings}} {
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
		FaultAddr: u(StateFaultAddr), Drops: u(StateDrops), StrBase: u(StateStrBase)}, nil
}

// ResetLocals zeroes the clause-local variables on every CPU, as a new
// probe firing starts them.
func (r *Runtime) ResetLocals() error {
	n, err := ebpf.PossibleCPU()
	if err != nil {
		return err
	}
	vals := make([][]byte, n)
	for i := range vals {
		vals[i] = make([]byte, r.Locals.ValueSize())
	}
	return r.Locals.Put(uint32(0), vals)
}
