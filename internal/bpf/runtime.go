package bpf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"golang.org/x/sys/unix"
)

// Runtime holds the maps translated DIFOs share: the state each leaves
// per CPU, the variables and the string tables of a Layout.
type Runtime struct {
	State, Globals, Locals, Threads, ThreadRefs, Strings, Scratch, StrBuf *ebpf.Map
	// Ctl holds the tracing's activity, Ring the firings' records.
	Ctl, Rec, Ring, Zero *ebpf.Map
	// Spec holds each speculation's state.
	Spec *ebpf.Map
	// Aggs holds the aggregations' entries, keyed by aggregation ID and
	// key: for each shape of aggregation, the map its probes aggregate
	// into, which SwapAggs trades for another. The probes find it in
	// entry 0 of an array of maps, its slot.
	Aggs      []*ebpf.Map
	aggSlots  []*ebpf.Map
	aggSpares []*ebpf.Map
	// The aggregation maps are made in the background, as the kernel
	// takes 0.2 s to fill each map of the default aggsize: aggsMade is
	// closed once Aggs are made and in their slots, which the programs
	// may be verified without but not attached (AggsMade), then
	// sparesMade once the spares are, which only the first SwapAggs
	// needs; each with its error.
	aggsMade   chan struct{}
	aggsErr    error
	sparesMade chan struct{}
	sparesErr  error
	closeMu    sync.Mutex
	closed     bool // by Close: a map made later is closed at once
	// ProbeNames holds the names of the probes, for probeprov …
	// probename: SetProbeNames fills it.
	ProbeNames *ebpf.Map
	// Key is where associative arrays' keys are built, Assocs the
	// arrays' elements, one map each (nil for an array whose keys the
	// translator refuses).
	Key    *ebpf.Map
	Assocs []*ebpf.Map
	// Lowered are the size options lowered for the maps to fit the
	// Layout's limit.
	Lowered []Lowered
	// Vtime holds the threads' CPU times vtimestamp reads, if a DIFO
	// reads it (LoadVtime).
	Vtime *ebpf.Map

	layout *Layout // what the maps were made for
}

// MapProbeNames' value: a probe's provider, module, function and name,
// each NUL-padded in its room (DTRACE_PROVNAMELEN …).
const (
	probeProvOff   = 0
	probeModOff    = probeProvOff + 64
	probeFuncOff   = probeModOff + 64
	probeNameOff   = probeFuncOff + 128
	probeNamesSize = probeNameOff + 64
)

// noPrealloc is BPF_F_NO_PREALLOC, which x/sys/unix has for Linux only.
const noPrealloc = 1

// NewRuntime makes the maps for the DIFOs added to l and fills the
// string map. Close releases them.
func NewRuntime(l *Layout) (*Runtime, error) {
	// The maps are sized for the possible CPUs, not the online ones:
	// a CPU brought online while they live fires probes too, into
	// the ring and the per-CPU maps, which have a value for each
	// possible CPU; FreeBSD's dtrace_buffer_alloc likewise counts
	// mp_maxid + 1 CPUs.
	ncpu, err := ebpf.PossibleCPU()
	if err != nil {
		return nil, fmt.Errorf("bpf: %w", err)
	}
	l.settle()
	lowered, err := l.fit(ncpu)
	if err != nil {
		return nil, err
	}
	specs := []*ebpf.MapSpec{
		{Name: MapState, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: stateSize, MaxEntries: 1},
		{Name: mapGlobals, Type: ebpf.Array, KeySize: 4, ValueSize: l.globalsSize(), MaxEntries: 1},
		{Name: mapLocals, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: l.localsSize(), MaxEntries: 1},
		{Name: mapThreads, Type: ebpf.Hash, KeySize: 16, ValueSize: 8, MaxEntries: l.threads},
		{Name: mapThreadRefs, Type: ebpf.Hash, KeySize: 16, ValueSize: l.threadRefSize(), MaxEntries: l.threads},
		{Name: mapStrings, Type: ebpf.Array, KeySize: 4, ValueSize: uint32(max(8, (len(l.strs)+7)&^7)), MaxEntries: 1},
		{Name: mapScratch, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 2 * l.scratch, MaxEntries: 1},
		{Name: MapStrBuf, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: l.strBufSize(), MaxEntries: 1},
	}
	specs = append(specs,
		&ebpf.MapSpec{Name: mapCtl, Type: ebpf.Array, KeySize: 4, ValueSize: ctlSize, MaxEntries: 1},
		&ebpf.MapSpec{Name: mapRec, Type: ebpf.Array, KeySize: 4, ValueSize: max(l.recSize, 8), MaxEntries: uint32(ncpu)},
		&ebpf.MapSpec{Name: mapRing, Type: ebpf.RingBuf, MaxEntries: l.ring},
		&ebpf.MapSpec{Name: mapZero, Type: ebpf.Array, KeySize: 4, ValueSize: l.zeroSize(), MaxEntries: 1},
		&ebpf.MapSpec{Name: mapProbeNames, Type: ebpf.Hash, KeySize: 4, ValueSize: probeNamesSize,
			MaxEntries: l.probes, Flags: noPrealloc},
		&ebpf.MapSpec{Name: mapKey, Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: l.maxKeySize(), MaxEntries: 1},
		&ebpf.MapSpec{Name: mapSpec, Type: ebpf.Array, KeySize: 4, ValueSize: 8, MaxEntries: l.nspec + 1},
	)
	r := &Runtime{Lowered: lowered, layout: l}
	ptrs := []**ebpf.Map{&r.State, &r.Globals, &r.Locals, &r.Threads, &r.ThreadRefs, &r.Strings, &r.Scratch, &r.StrBuf, &r.Ctl, &r.Rec, &r.Ring, &r.Zero, &r.ProbeNames, &r.Key, &r.Spec}
	for i, spec := range specs {
		m, err := ebpf.NewMap(spec)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("bpf: creating map %s: %w", spec.Name, err)
		}
		*ptrs[i] = m
	}
	if l.vtime {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Name: mapVtime, Type: ebpf.LRUHash, KeySize: 4, ValueSize: vtimeSize, MaxEntries: vtimeThreads})
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("bpf: creating map %s: %w", mapVtime, err)
		}
		r.Vtime = m
	}
	var aggSpecs []*ebpf.MapSpec
	for i, a := range l.shapes {
		// Two maps of the shape, each holding the keys of a snapshot's
		// interval, as dtrace's two aggregation buffers a CPU.
		n := uint32(aggEntries(l.aggOpt, a))
		typ := ebpf.PerCPUHash
		if a.shared() {
			typ = ebpf.Hash
		}
		spec := &ebpf.MapSpec{Name: aggMapName(i), Type: typ, KeySize: a.key, ValueSize: a.value, MaxEntries: n}
		aggSpecs = append(aggSpecs, spec)
		// The slot takes maps like its inner map, made for the
		// purpose and closed: of one entry, as the kernel does not
		// compare a hash's entries with it (bpf_map_meta_equal),
		// where one of spec's, preallocated, would take as long to
		// make as the live map (a quarter of a second for the
		// default aggsize on two CPUs).
		inner := *spec
		inner.MaxEntries = 1
		slot, err := ebpf.NewMap(&ebpf.MapSpec{Name: aggMapName(i), Type: ebpf.ArrayOfMaps, KeySize: 4, ValueSize: 4, MaxEntries: 1, InnerMap: &inner})
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("bpf: creating an aggregation map's slot: %w", err)
		}
		r.aggSlots = append(r.aggSlots, slot)
	}
	r.Aggs = make([]*ebpf.Map, len(aggSpecs))
	r.aggSpares = make([]*ebpf.Map, len(aggSpecs))
	r.aggsMade, r.sparesMade = make(chan struct{}), make(chan struct{})
	go r.makeAggs(aggSpecs)
	assocs := make([]*assoc, l.nassoc)
	for _, a := range l.assocs {
		assocs[a.index] = a
	}
	for i, a := range assocs {
		if a.keys == nil || a.err != "" {
			// Never used, or refused where it is.
			continue
		}
		m, err := ebpf.NewMap(&ebpf.MapSpec{Name: assocMapName(i), Type: ebpf.Hash, KeySize: l.keySize(a),
			ValueSize: l.valueSize(a), MaxEntries: l.threads})
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("bpf: creating an associative array's map: %w", err)
		}
		for len(r.Assocs) < i {
			r.Assocs = append(r.Assocs, nil)
		}
		r.Assocs = append(r.Assocs, m)
	}
	strs := make([]byte, r.Strings.ValueSize())
	copy(strs, l.strs)
	if err := r.Strings.Put(uint32(0), strs); err != nil {
		r.Close()
		return nil, fmt.Errorf("bpf: filling the string map: %w", err)
	}
	if err := r.SetWallClock(); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// assocMapName is the name of the map of the i'th associative array.
func assocMapName(i int) string { return fmt.Sprintf("kd_assoc%d", i) }

// makeAggs makes the aggregation maps of specs, the live ones first,
// each put in its slot, then the spares.
func (r *Runtime) makeAggs(specs []*ebpf.MapSpec) {
	defer close(r.sparesMade)
	r.aggsErr = r.makeMaps(specs, r.Aggs, true)
	close(r.aggsMade)
	if r.aggsErr != nil {
		r.sparesErr = r.aggsErr
		return
	}
	r.sparesErr = r.makeMaps(specs, r.aggSpares, false)
}

// errClosed stops the making of maps for a runtime closed meanwhile.
var errClosed = errors.New("bpf: runtime closed")

// makeMaps makes a map of each of specs into maps, and with live puts
// each in its aggregation slot.
func (r *Runtime) makeMaps(specs []*ebpf.MapSpec, maps []*ebpf.Map, live bool) error {
	for i, spec := range specs {
		m, err := ebpf.NewMap(spec)
		if err != nil {
			return fmt.Errorf("bpf: creating an aggregation map: %w", err)
		}
		if live {
			if err := r.aggSlots[i].Put(uint32(0), m); err != nil {
				m.Close()
				return fmt.Errorf("bpf: filling an aggregation map's slot: %w", err)
			}
		}
		r.closeMu.Lock()
		closed := r.closed
		if !closed {
			maps[i] = m
		}
		r.closeMu.Unlock()
		if closed {
			m.Close()
			return errClosed
		}
	}
	return nil
}

// AggsMade waits for the aggregation maps, made in the background, to
// be in their slots: a program that aggregates can be verified before,
// but must not run, so not be attached, until then.
func (r *Runtime) AggsMade() error {
	<-r.aggsMade
	return r.aggsErr
}

// Close releases the maps.
func (r *Runtime) Close() error {
	// The spares still being made are not waited for.
	r.closeMu.Lock()
	r.closed = true
	r.closeMu.Unlock()
	var errs []error
	for _, m := range []*ebpf.Map{r.State, r.Globals, r.Locals, r.Threads, r.ThreadRefs, r.Strings, r.Scratch, r.StrBuf, r.Ctl, r.Rec, r.Ring, r.Zero, r.ProbeNames, r.Key, r.Spec, r.Vtime} {
		if m != nil {
			errs = append(errs, m.Close())
		}
	}
	r.closeMu.Lock()
	aggs := slices.Concat(r.Aggs, r.aggSpares)
	r.closeMu.Unlock()
	for _, m := range slices.Concat(r.aggSlots, aggs, r.Assocs) {
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
	return r.LoadProbe(name, CtxRun, insns, nil, ebpf.AttachNone)
}

// LoadProbe associates insns, a program built for context ctx, with the
// runtime's maps and its own (MapProbes, MapUArgs; by name) and loads
// it for attachments of the given type (uprobe_multi links need
// theirs).
func (r *Runtime) LoadProbe(name string, ctx Context, insns asm.Instructions, own map[string]*ebpf.Map, at ebpf.AttachType) (*ebpf.Program, error) {
	return r.load(name, ctx, insns, own, at)
}

// A Trampoline is a program of CtxFEntry or CtxFExit to load for the
// kernel function it traces, named as the BTF of the kernel or of a
// loaded module names it: the kernel checks the program against the
// function's arguments, and it can be attached there alone.
type Trampoline struct {
	Name     string
	Context  Context
	Insns    asm.Instructions
	Own      map[string]*ebpf.Map // as LoadProbe's
	Function string
}

// LoadTrampolines loads the programs of ts as LoadProbe loads one, all
// or none, finding their functions in kernel, the kernel's BTF as
// cilium/ebpf reads it (nil to read it afresh): whoever asked about the
// functions before (attach.TrampolineTarget) and the programs read it
// once, where each program loaded alone reads and indexes it again
// (half a second of CPU under emulation).
func (r *Runtime) LoadTrampolines(ts []Trampoline, kernel *btf.Cache) ([]*ebpf.Program, error) {
	cs := &ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{}}
	keys := make([]string, len(ts))
	for i, tr := range ts {
		if tr.Context != CtxFEntry && tr.Context != CtxFExit {
			return nil, fmt.Errorf("bpf: loading %s: context %d has no trampoline", tr.Name, tr.Context)
		}
		spec, err := r.spec(tr.Name, tr.Context, tr.Insns, tr.Own, tr.Context.AttachType())
		if err != nil {
			return nil, err
		}
		spec.AttachTo = tr.Function
		// The collection's errors name a program by its key.
		keys[i] = tr.Name
		if _, dup := cs.Programs[keys[i]]; dup {
			keys[i] += "#" + strconv.Itoa(i)
		}
		cs.Programs[keys[i]] = spec
	}
	coll, err := ebpf.NewCollectionWithOptions(cs, ebpf.CollectionOptions{Cache: kernel})
	if err != nil {
		if len(ts) == 1 {
			return nil, fmt.Errorf("bpf: loading the trampoline for %s: %w", ts[0].Function, err)
		}
		return nil, fmt.Errorf("bpf: loading %d trampolines: %w", len(ts), err)
	}
	progs := make([]*ebpf.Program, len(ts))
	for i, k := range keys {
		progs[i] = coll.Programs[k]
	}
	return progs, nil
}

func (r *Runtime) load(name string, ctx Context, insns asm.Instructions, own map[string]*ebpf.Map, at ebpf.AttachType) (*ebpf.Program, error) {
	spec, err := r.spec(name, ctx, insns, own, at)
	if err != nil {
		return nil, err
	}
	prog, err := ebpf.NewProgram(spec)
	if err != nil {
		return nil, fmt.Errorf("bpf: loading %s: %w", name, err)
	}
	return prog, nil
}

// spec returns the spec of a program, its instructions tied to the
// runtime's maps and its own.
func (r *Runtime) spec(name string, ctx Context, insns asm.Instructions, own map[string]*ebpf.Map, at ebpf.AttachType) (*ebpf.ProgramSpec, error) {
	insns = append(asm.Instructions(nil), insns...)
	maps := map[string]*ebpf.Map{MapState: r.State, mapGlobals: r.Globals, mapLocals: r.Locals, mapThreads: r.Threads, mapThreadRefs: r.ThreadRefs,
		mapStrings: r.Strings, mapScratch: r.Scratch, MapStrBuf: r.StrBuf, mapCtl: r.Ctl, mapRec: r.Rec, mapRing: r.Ring, mapZero: r.Zero,
		mapProbeNames: r.ProbeNames, mapKey: r.Key, mapSpec: r.Spec}
	if r.Vtime != nil {
		maps[mapVtime] = r.Vtime
	}
	for name, m := range own {
		maps[name] = m
	}
	for i, m := range r.aggSlots {
		maps[aggMapName(i)] = m
	}
	for i, m := range r.Assocs {
		if m != nil {
			maps[assocMapName(i)] = m
		}
	}
	for name, m := range maps {
		if err := insns.AssociateMap(name, m); err != nil && !errors.Is(err, asm.ErrUnreferencedSymbol) {
			return nil, fmt.Errorf("bpf: %w", err)
		}
	}
	return &ebpf.ProgramSpec{
		Name:         name,
		Type:         ctx.ProgramType(),
		AttachType:   at,
		Instructions: insns,
		License:      "GPL", // bpf_probe_read_kernel is GPL-only
	}, nil
}

// state is what a translated DIFO left on one CPU.
type state struct {
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
func (r *Runtime) ReadState(cpu int) (state, error) {
	var vals [][]byte
	if err := r.State.Lookup(uint32(0), &vals); err != nil {
		return state{}, fmt.Errorf("bpf: reading the state map: %w", err)
	}
	if cpu < 0 || cpu >= len(vals) {
		return state{}, fmt.Errorf("bpf: no CPU %d", cpu)
	}
	b := vals[cpu]
	u := func(off int) uint64 { return binary.NativeEndian.Uint64(b[off:]) }
	return state{Ret: u(StateRet), Fault: u(stateFault), FaultPC: u(stateFaultPC),
		FaultAddr: u(stateFaultAddr), Drops: u(stateDrops), StrBase: u(stateStrBase),
		Scratch: u(stateScratch), ScrBase: u(stateScrBase)}, nil
}

// BeginFiring starts a probe firing on every CPU as dif/vm's
// BeginFiring does: clause-locals and scratch memory zeroed, no scratch
// allocated, the firing's time taken, for tests that run a
// translated DIFO alone; a probe program does the same at each firing.
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
	// The firing's time, as bpf_ktime_get_ns would take it.
	var now unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &now); err != nil {
		return fmt.Errorf("bpf: reading the clock: %w", err)
	}
	for _, v := range vals {
		binary.NativeEndian.PutUint64(v[stateScratch:], 0)
		binary.NativeEndian.PutUint64(v[stateStrtok:], 0)
		binary.NativeEndian.PutUint64(v[stateNow:], uint64(now.Nano()))
	}
	if err := r.State.Put(uint32(0), vals); err != nil {
		return fmt.Errorf("bpf: writing the state map: %w", err)
	}
	return nil
}

// minAggEntries is the fewest entries an aggregation map holds.
const minAggEntries = 1024

// SwapAggs puts in place of each aggregation map i of which (an index
// of Aggs) its spare, and returns the maps it replaced, in which's
// order: as dtrace_aggregate_snap switches a CPU's aggregation buffer
// for its other, emptied one. When it returns, no probe program runs on
// the maps replaced (the kernel waits for the programs running as it
// updates an array of maps, maybe_wait_bpf_programs): they can be read
// and emptied without losing a firing's update. They are the spares of
// the next SwapAggs, and must be empty by then.
func (r *Runtime) SwapAggs(which []int) ([]*ebpf.Map, error) {
	if <-r.sparesMade; r.sparesErr != nil {
		return nil, r.sparesErr
	}
	// The kernel waits for the programs at each update, a grace period
	// of RCU: the slots are updated at once, so that the waits overlap.
	errs := make([]error, len(which))
	var wg sync.WaitGroup
	for j, i := range which {
		wg.Go(func() {
			if err := r.aggSlots[i].Update(uint32(0), r.aggSpares[i], ebpf.UpdateAny); err != nil {
				errs[j] = fmt.Errorf("bpf: swapping aggregation map %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	old := make([]*ebpf.Map, len(which))
	for j, i := range which {
		if errs[j] == nil {
			r.Aggs[i], r.aggSpares[i] = r.aggSpares[i], r.Aggs[i]
			old[j] = r.aggSpares[i]
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return old, nil
}

// A ProbeEntry is what a probe program finds in its MapProbes for a
// probe: the probe's ID and the EPID of each of the program's clauses
// for it, 0 for a clause that does not apply to it.
type ProbeEntry struct {
	ID    uint32
	EPIDs []uint32
}

// NewProbeMap returns the MapProbes of a program of nclauses clauses,
// holding entries by index.
//
// Indexes under maxArrayIndex make an array, whose lookups the verifier
// inlines (a system call's number, the cookies of a program's sites);
// its entries of no probe are zero, and probe IDs start at 1.
func NewProbeMap(nclauses int, entries map[uint32]ProbeEntry) (*ebpf.Map, error) {
	return NewProbeMapRoom(nclauses, entries, 0)
}

// NewProbeMapRoom is NewProbeMap with room for that many entries more,
// which PutProbeEntry adds as probes are made while the tracing runs: a
// hash whose entries are allocated as they are put.
func NewProbeMapRoom(nclauses int, entries map[uint32]ProbeEntry, room uint32) (*ebpf.Map, error) {
	spec := &ebpf.MapSpec{Name: MapProbes, Type: ebpf.Array, KeySize: 4,
		ValueSize: uint32(4 * (1 + nclauses)), MaxEntries: 1}
	for idx := range entries {
		if idx >= maxArrayIndex {
			spec.Type, spec.MaxEntries = ebpf.Hash, uint32(len(entries))
			break
		}
		spec.MaxEntries = max(spec.MaxEntries, idx+1)
	}
	if room > 0 {
		spec.Type, spec.MaxEntries, spec.Flags = ebpf.Hash, uint32(len(entries))+room, noPrealloc
	}
	m, err := ebpf.NewMap(spec)
	if err != nil {
		return nil, fmt.Errorf("bpf: creating a probe map: %w", err)
	}
	for idx, e := range entries {
		if err := PutProbeEntry(m, nclauses, idx, e); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// PutProbeEntry puts the entry of the probe at index idx in a probe
// map of a program of nclauses clauses.
func PutProbeEntry(m *ebpf.Map, nclauses int, idx uint32, e ProbeEntry) error {
	v := make([]byte, 4*(1+nclauses))
	binary.NativeEndian.PutUint32(v, e.ID)
	for i, epid := range e.EPIDs {
		binary.NativeEndian.PutUint32(v[4+4*i:], epid)
	}
	if err := m.Put(idx, v); err != nil {
		return fmt.Errorf("bpf: filling a probe map: %w", err)
	}
	return nil
}

// maxArrayIndex bounds the indexes of a probe map made an array.
const maxArrayIndex = 4096

// Counters are what the probe programs counted on one CPU.
type Counters struct {
	BufDrops, AggDrops, DynDrops uint64
	// Filled is set when the CPU's buffer filled, under the fill
	// policy.
	Filled bool
}

// ReadCounters returns each CPU's counters.
func (r *Runtime) ReadCounters() ([]Counters, error) {
	var vals [][]byte
	if err := r.State.Lookup(uint32(0), &vals); err != nil {
		return nil, fmt.Errorf("bpf: reading the state map: %w", err)
	}
	cs := make([]Counters, len(vals))
	for i, b := range vals {
		u := func(off int) uint64 { return binary.NativeEndian.Uint64(b[off:]) }
		cs[i] = Counters{BufDrops: u(stateBufDrops), AggDrops: u(stateAggDrops), DynDrops: u(stateDrops), Filled: u(stateFilled) != 0}
	}
	return cs, nil
}

// Activity returns the tracing's activity (Activity*).
func (r *Runtime) Activity() (uint64, error) {
	var v [ctlSize]byte
	if err := r.Ctl.Lookup(uint32(0), &v); err != nil {
		return 0, fmt.Errorf("bpf: reading the control map: %w", err)
	}
	return binary.NativeEndian.Uint64(v[ctlActivity:]), nil
}

// SetActivity sets the tracing's activity.
func (r *Runtime) SetActivity(a uint64) error { return r.setCtl(ctlActivity, a) }

// SetWallClock sets the offset walltimestamp adds to CLOCK_MONOTONIC
// from the clocks now: NewRuntime sets it, and a long tracing may set
// it again as the wall clock is adjusted.
func (r *Runtime) SetWallClock() error {
	var mono, wall unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono); err != nil {
		return fmt.Errorf("bpf: reading the clock: %w", err)
	}
	if err := unix.ClockGettime(unix.CLOCK_REALTIME, &wall); err != nil {
		return fmt.Errorf("bpf: reading the clock: %w", err)
	}
	return r.setCtl(ctlWallOff, uint64(wall.Nano()-mono.Nano()))
}

// setCtl sets the word at off of the control map's value. Only user
// space writes it, one writer at a time.
func (r *Runtime) setCtl(off int, v uint64) error {
	var b [ctlSize]byte
	if err := r.Ctl.Lookup(uint32(0), &b); err != nil {
		return fmt.Errorf("bpf: reading the control map: %w", err)
	}
	binary.NativeEndian.PutUint64(b[off:], v)
	if err := r.Ctl.Put(uint32(0), b); err != nil {
		return fmt.Errorf("bpf: writing the control map: %w", err)
	}
	return nil
}

// SetProbeNames gives the probe of ID id its names, which probeprov,
// probemod, probefunc and probename read; each is cut to its room less
// its NUL, as dtrace's DTRACE_*NAMELEN bound them.
func (r *Runtime) SetProbeNames(id uint32, prov, mod, fn, name string) error {
	var v [probeNamesSize]byte
	for _, f := range []struct {
		s        string
		off, end int
	}{{prov, probeProvOff, probeModOff}, {mod, probeModOff, probeFuncOff}, {fn, probeFuncOff, probeNameOff}, {name, probeNameOff, probeNamesSize}} {
		copy(v[f.off:f.end-1], f.s)
	}
	if err := r.ProbeNames.Put(id, v); err != nil {
		return fmt.Errorf("bpf: setting the names of probe %d: %w", id, err)
	}
	return nil
}
