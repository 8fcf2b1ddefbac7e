package bpf

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/kdtrace/kdtrace/dif"
)

// The state map's value, one per CPU: what a translated DIFO leaves for
// the caller, at these byte offsets.
const (
	StateRet       = 0  // the DIFO's return value (an address for a by-reference type)
	stateFault     = 8  // DTRACEFLT_* code of the fault that stopped the DIFO, 0 if none
	stateFaultPC   = 16 // index of the faulting DIF instruction (DIF offset / 4)
	stateFaultAddr = 24 // address at fault, for faults of memory
	stateDrops     = 32 // stores to thread-locals the map had no room for (dynamic variable drops)
	stateStrBase   = 40 // kernel address of the string map's value, as a scalar
	StateArgs      = 48 // arg0 … arg9, 8 bytes each, filled by whoever fires the probe
	NArgs          = 10
	stateScratch   = StateArgs + 8*NArgs     // bytes of scratch allocated (dtms_scratch_ptr, from 0)
	stateScrBase   = stateScratch + 8        // kernel address of this CPU's scratch, as a scalar
	StateEPID      = stateScrBase + 8        // EPID of the clause running
	StateProbeID   = StateEPID + 8           // ID of the probe that fired
	stateBufDrops  = StateProbeID + 8        // firings the ring buffer had no room for, or that interrupted another
	stateAggDrops  = stateBufDrops + 8       // aggregation entries the maps had no room for
	stateBusy      = stateAggDrops + 8       // a probe program is running on this CPU
	stateRegs      = stateBusy + 8           // the registers (pt_regs) of a system call
	stateRawArgs   = stateRegs + ptRegsSize  // a tracepoint's arguments, for SDT sites
	stateSiteArgs  = stateRawArgs + 8*NArgs  // an SDT probe's arguments, as its site makes them
	stateGlobBase  = stateSiteArgs + 8*NArgs // kernel address of MapGlobals' value, as a scalar
	stateLocBase   = stateGlobBase + 8       // kernel address of this CPU's MapLocals value, as a scalar
	stateTmp       = stateLocBase + 8        // where a pointer is stored to be read back as a scalar
	stateLoop      = stateTmp + 8            // the state of a subroutine's bpf_loop, NLoop words
	nLoop          = 26
	stateStrtok    = stateLoop + 8*nLoop // strtok()'s place in its string, 0 if none (dtms_strtok)
	stateStrtokEnd = stateStrtok + 8     // the end of strtok()'s string
	stateChillMark = stateStrtokEnd + 8  // start of this CPU's chill() interval (cpu_dtrace_chillmark)
	stateChilled   = stateChillMark + 8  // nanoseconds chilled in it (cpu_dtrace_chilled)
	stateElem      = stateChilled + 8    // address of the by-reference element looked up last, as a scalar
	stateBufUsed   = stateElem + 8       // bytes of records this CPU's buffer holds, under the fill policy
	stateFilled    = stateBufUsed + 8    // 1 once this CPU's buffer filled, under the fill policy
	stateIndex     = stateFilled + 8     // the probe's index in MapProbes, for the programs of a chain after the first
	stateSite      = stateIndex + 8      // in a chain of sites, 1 if the site evaluated last fires, else 0
	stateNow       = stateSite + 8       // the firing's time (timestamp), taken as it starts (see now)
	stateSize      = stateNow + 8
)

// Names of the maps translated code refers to (asm.Instruction.Reference);
// Runtime associates its maps with them.
const (
	MapState      = "kd_state"      // per-CPU array, 1 entry of StateSize bytes
	mapGlobals    = "kd_globals"    // array, 1 entry: the global scalars, 8 bytes each
	mapLocals     = "kd_locals"     // per-CPU array, 1 entry: the clause-local scalars
	mapThreads    = "kd_threads"    // hash: ThreadKey → 8-byte value
	mapThreadRefs = "kd_threadrefs" // hash: ThreadKey → the bytes of a by-reference thread-local
	mapProbeNames = "kd_pnames"     // hash: probe ID → its names (ProbeNamesSize bytes)
	mapKey        = "kd_key"        // per-CPU array, 1 entry: an associative array's key as it is built
	mapStrings    = "kd_strings"    // array, 1 entry: the string tables of all DIFOs
	mapScratch    = "kd_scratch"    // per-CPU array, 1 entry: scratch memory, then as many zero bytes
	MapStrBuf     = "kd_strbuf"     // per-CPU array, 1 entry: the two strings scmp compares
	mapCtl        = "kd_ctl"        // array, 1 entry of CtlSize bytes: the tracing's activity
	MapProbes     = "kd_probes"     // hash, one per probe program: index → the probe's ID and its clauses' EPIDs
	mapRec        = "kd_rec"        // array, an entry per CPU: RecPrefix, then a firing's records as they are built
	mapRing       = "kd_ring"       // ring buffer: the firings' records, each behind its RecPrefix
	mapZero       = "kd_zero"       // array, 1 entry of zeroes to copy from
	MapUArgs      = "kd_uargs"      // hash, one per USDT program: index → where the point's arguments are
	mapSpec       = "kd_spec"       // array, nspec+1 entries: each speculation's state (Spec*)
	mapChain      = "kd_chain"      // program array, one per chain of probe programs: each program by its place
)

// Layout places the variables and the string tables of a program's DIFOs
// in the runtime's maps. Every DIFO must be added before the maps are
// made (NewRuntime) and before it is translated.
type Layout struct {
	threads uint32           // entries of each map of dynamic variables, once fit
	probes  uint32           // entries of MapProbeNames
	scratch uint32           // bytes of scratch memory per CPU
	strsize uint32           // the strsize option
	globals map[uint32]int16 // variable id → byte offset in MapGlobals
	locals  map[uint32]int16 // variable id → byte offset in MapLocals
	// By-reference globals and clause-locals: variable id → the offset
	// of their storage after the scalar slots, and the bytes of all.
	grefs, lrefs       map[uint32]varRef
	grefSize, lrefSize uint32
	trefSize           uint32 // bytes of MapThreadRefs' value
	// Associative arrays, each in a hash map of its own.
	assocs  map[assocID]*assoc
	nassoc  int
	strs    []byte
	strBase map[*dif.Object]uint32

	// The size options, as set, then as fit lowers them, and the
	// memory the maps of each may take.
	bufSize, aggOpt, dynVarSize uint64
	limit                       uint64
	manual                      bool

	ring    uint32         // bytes of the ring buffer, all CPUs', once fit
	fill    uint32         // Config.Fill, at most bufsize once fit
	reserve uint32         // Config.FillReserve
	nspec   uint32         // the nspec option
	recSize uint32         // bytes of MapRec's value
	aggs    map[uint32]int // aggregation ID → its map, in shapes (settle)
	shapes  []aggMap
	aggKeys map[uint32]*aggKey // aggregation ID → how its map keeps its keys
	settled bool               // aggs and shapes are set
	vtime   bool               // a DIFO reads vtimestamp: the runtime keeps MapVtime
}

// aggMap is the shape of an aggregation's map: its key (the
// aggregation's ID and the key's records) and its value (the data,
// then AggTouched bytes).
type aggMap struct{ key, value uint32 }

// maxPerCPUValue is the largest value of a per-CPU map
// (PCPU_MIN_UNIT_SIZE).
const maxPerCPUValue = 32 << 10

// shared reports whether the aggregations of this shape share one entry
// of a key between CPUs: an lquantize() or llquantize() with more
// buckets than a per-CPU entry holds. Their firings add to the buckets
// atomically.
func (a aggMap) shared() bool { return a.value > maxPerCPUValue }

// Config sizes the runtime's maps.
type Config struct {
	// DynVarSize is the dynvarsize option: each map of dynamic
	// variables (thread-locals, an associative array) holds an entry
	// for each DynVarBytes of it; 0 means DefaultDynVarSize.
	DynVarSize uint64
	// Scratch is the bytes of scratch memory of a CPU: a power of two
	// from 8 to MaxScratch; 0 means DefaultScratch.
	Scratch uint32
	// StrSize is the strsize option, at most MaxStrSize; 0 means 256.
	StrSize uint32
	// BufSize is the bufsize option: the bytes of records each CPU's
	// buffer holds, as dtrace's principal buffer of a CPU; the ring
	// buffer the CPUs' firings share holds bufsize of each possible
	// CPU's, rounded up to a power of two. 0 means DefaultBufSize.
	BufSize uint64
	// AggSize is the aggsize option: the bytes of aggregation entries
	// each aggregation's map may hold; 0 means DefaultAggSize.
	AggSize uint64
	// Limit is the most memory the maps of one size option may take
	// (0: no limit); NewRuntime lowers an option whose maps take more
	// (Runtime.Lowered) or, with Manual (bufresize=manual), refuses it.
	Limit  uint64
	Manual bool
	// Probes is the number of probes whose names (probeprov …
	// probename) the runtime holds; 0 means 16384.
	Probes uint32
	// NSpec is the number of speculations (dtrace's nspec), at most
	// MaxNSpec; 0 means 1.
	NSpec uint32
	// Fill is the bytes of records a CPU's buffer holds under dtrace's
	// fill policy (bufsize), FillReserve those of them kept for END's
	// firings; Fill is 0 under the other policies.
	Fill, FillReserve uint32
}

// MaxStrSize bounds the strsize option: two strings and their NULs
// fill MapStrBuf's value.
const MaxStrSize = 4096

// Scratch sizes. A per-CPU map value holds at most 32 KiB, and the
// scratch map's value is twice the scratch size.
const (
	DefaultScratch = 16384
	maxScratch     = 16384
)

// NewLayout returns an empty layout for maps of the given sizes (nil:
// the defaults).
func NewLayout(cfg *Config) (*Layout, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	l := &Layout{scratch: cfg.Scratch, strsize: cfg.StrSize,
		globals: map[uint32]int16{}, locals: map[uint32]int16{}, strBase: map[*dif.Object]uint32{},
		grefs: map[uint32]varRef{}, lrefs: map[uint32]varRef{}, assocs: map[assocID]*assoc{},
		bufSize: cmp.Or(cfg.BufSize, DefaultBufSize), aggOpt: cmp.Or(cfg.AggSize, defaultAggSize),
		dynVarSize: cmp.Or(cfg.DynVarSize, defaultDynVarSize), limit: cfg.Limit, manual: cfg.Manual,
		fill: cfg.Fill, reserve: cfg.FillReserve, aggs: map[uint32]int{}, aggKeys: map[uint32]*aggKey{}, probes: cfg.Probes}
	if l.probes == 0 {
		l.probes = 16384
	}
	l.nspec = max(1, cfg.NSpec)
	if l.nspec > maxNSpec {
		return nil, fmt.Errorf("bpf: nspec %d is over %d", l.nspec, maxNSpec)
	}
	if l.scratch == 0 {
		l.scratch = DefaultScratch
	}
	if l.strsize == 0 {
		l.strsize = 256
	}
	if l.strsize > MaxStrSize {
		return nil, fmt.Errorf("bpf: strsize %d is over %d", l.strsize, MaxStrSize)
	}
	if l.scratch < 8 || l.scratch > maxScratch || l.scratch&(l.scratch-1) != 0 {
		return nil, fmt.Errorf("bpf: scratch size %d is not a power of two from 8 to %d", cfg.Scratch, maxScratch)
	}
	return l, nil
}

// maxSlots bounds the scalar variables of a scope: a BPF load or store
// offset is 16 bits.
const maxSlots = 4095

// maxPerCPU bounds the value of a per-CPU map.
const maxPerCPU = 32 << 10

// A varRef is the storage of a by-reference global or clause-local, as
// the kernel keeps it (dtsv_data): a word that is not 0 after a store
// of NULL, then the data.
type varRef struct {
	off   uint32 // from the end of the scalar slots
	size  uint32 // bytes of data the variable holds
	limit uint32 // bytes a store copies at most, a string's NUL included
	str   bool
}

// refHeader is the bytes before a by-reference variable's data.
const refHeader = 8

// newVarRef returns the storage of a by-reference variable of type t: a
// string of size 0 has the string size, as the kernel's loader gives
// it, and room for the NUL bpf_probe_read_kernel_str always writes.
func (l *Layout) newVarRef(t dif.Type) varRef {
	r := varRef{size: t.Size, str: t.Kind == dif.TypeString}
	if r.str && r.size == 0 {
		r.size = l.strsize
	}
	r.limit = r.size
	if r.str {
		r.limit++
	}
	return r
}

// byRef reports whether a variable of type t holds its bytes, as the
// kernel's DIF_TF_BYREF variables do.
func byRef(t dif.Type) bool { return t.Flags&dif.TFByRef != 0 }

// Add gives o's globals and clause-locals a place each (the variable
// ids are shared among a program's DIFOs, as in the kernel): 8 bytes
// for a scalar, its bytes for a by-reference one. By-reference
// thread-locals size MapThreadRefs' value. o's string table is appended
// to the string map.
func (l *Layout) Add(o *dif.Object) error {
	if _, ok := l.strBase[o]; ok {
		return nil
	}
	for i := range o.Vars {
		v := &o.Vars[i]
		if v.Kind != dif.KindScalar || v.ID < dif.VarOtherUBase {
			continue
		}
		if byRef(v.Type) {
			if err := l.addRef(v); err != nil {
				return err
			}
			continue
		}
		var m map[uint32]int16
		switch v.Scope {
		case dif.ScopeGlobal:
			m = l.globals
		case dif.ScopeLocal:
			m = l.locals
		default:
			continue
		}
		if _, ok := m[v.ID]; ok {
			continue
		}
		if len(m) == maxSlots {
			return fmt.Errorf("bpf: more than %d variables of one scope", maxSlots)
		}
		m[v.ID] = int16(8 * len(m))
	}
	if len(l.strs)+len(o.Strs) > 1<<31 {
		return fmt.Errorf("bpf: string tables too large")
	}
	l.addAssocs(o)
	l.vtime = l.vtime || usesVtime(o)
	l.strBase[o] = uint32(len(l.strs))
	l.strs = append(l.strs, o.Strs...)
	if l.localsSize() > maxPerCPU {
		return fmt.Errorf("bpf: clause-local variables of %d bytes, over %d", l.localsSize(), maxPerCPU)
	}
	return nil
}

// assocID names an associative array: its scope and id.
type assocID struct {
	scope uint8
	id    uint32
}

// An assoc is an associative array as its map keeps it: the key is the
// array's id (4 bytes and 4 of padding), then each of the tuple's
// entries, a value in 8 bytes or a string in strsize bytes and a NUL,
// zero-padded (and the thread's id for a thread-local array); the
// value is the element's, 8 bytes or a by-reference type's bytes.
type assoc struct {
	index int
	keys  []keyKind // nil until an instruction shows them
	value varRef
	ref   bool // the value is by reference
	err   string
}

// keyKind is how a tuple entry is in a key.
type keyKind uint8

const (
	keyValue  keyKind = iota // pushtv, or the thread's id
	keyString                // pushtr of a string
)

// keySize is the bytes of a's keys.
func (l *Layout) keySize(a *assoc) uint32 {
	n := uint32(8)
	for _, k := range a.keys {
		n += l.keyEntrySize(k)
	}
	return n
}

func (l *Layout) keyEntrySize(k keyKind) uint32 {
	if k == keyString {
		return (l.strsize + 1 + 7) &^ 7
	}
	return 8
}

// valueSize is the bytes of a's elements. Elements by reference are
// all as big as the largest, so that a store into the last one looked
// up (elemPtr) is bounded by one size whichever array it is in.
func (l *Layout) valueSize(a *assoc) uint32 {
	if !a.ref {
		return 8
	}
	n := uint32(8)
	for _, b := range l.assocs {
		if b.ref {
			n = max(n, (b.value.limit+7)&^7)
		}
	}
	return n
}

// addAssocs notes o's associative arrays and the shape of their keys,
// which the pushes before each of their loads and stores show: an
// array whose key the translator cannot keep is refused where it is
// used.
func (l *Layout) addAssocs(o *dif.Object) {
	for i := range o.Vars {
		v := &o.Vars[i]
		if v.Kind != dif.KindArray || v.ID < dif.VarOtherUBase || v.Scope == dif.ScopeLocal {
			continue
		}
		id := assocID{v.Scope, v.ID}
		if _, ok := l.assocs[id]; ok {
			continue
		}
		a := &assoc{index: l.nassoc, ref: byRef(v.Type)}
		if a.ref {
			a.value = l.newVarRef(v.Type)
		}
		l.nassoc++
		l.assocs[id] = a
	}
	var stack []keyKind
	other := false // a pushed reference that is not a string
	for _, in := range o.Code {
		switch op := in.Op(); op {
		case dif.FLUSHTS:
			stack, other = stack[:0], false
		case dif.PUSHTV:
			stack = append(stack, keyValue)
		case dif.PUSHTR:
			if in.R1() != dif.TypeString {
				other = true
			}
			stack = append(stack, keyString)
		case dif.POPTS:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case dif.LDGAA, dif.STGAA, dif.LDTAA, dif.STTAA:
			scope := uint8(dif.ScopeGlobal)
			if op == dif.LDTAA || op == dif.STTAA {
				scope = dif.ScopeThread
			}
			a, ok := l.assocs[assocID{scope, uint32(in.Var())}]
			if !ok || a.err != "" {
				continue
			}
			keys := slices.Clone(stack)
			if scope == dif.ScopeThread {
				keys = append(keys, keyValue)
			}
			switch {
			case other:
				a.err = "a key of a by-reference type other than string"
			case a.keys != nil && !slices.Equal(a.keys, keys):
				a.err = "keys of different types"
			default:
				a.keys = keys
			}
		}
	}
}

// addRef places a by-reference variable.
func (l *Layout) addRef(v *dif.Var) error {
	r := l.newVarRef(v.Type)
	// Beyond 1 MiB, the sizes below could overflow.
	if r.size > 1<<20 {
		return fmt.Errorf("bpf: variable of %d bytes", r.size)
	}
	room := (refHeader + r.limit + 7) &^ 7
	switch v.Scope {
	case dif.ScopeGlobal:
		if _, ok := l.grefs[v.ID]; !ok {
			r.off, l.grefSize = l.grefSize, l.grefSize+room
			l.grefs[v.ID] = r
		}
	case dif.ScopeLocal:
		if _, ok := l.lrefs[v.ID]; !ok {
			r.off, l.lrefSize = l.lrefSize, l.lrefSize+room
			l.lrefs[v.ID] = r
		}
	case dif.ScopeThread:
		l.trefSize = max(l.trefSize, (r.limit+7)&^7)
	}
	return nil
}

// Strings returns the bytes of the string map's value: the string tables
// of the DIFOs added, one after another.
func (l *Layout) Strings() []byte { return l.strs }

// StringBase returns the offset of o's string table in the string map.
func (l *Layout) StringBase(o *dif.Object) (uint32, bool) {
	b, ok := l.strBase[o]
	return b, ok
}

func (l *Layout) globalsSize() uint32 { return slotsSize(len(l.globals)) + l.grefSize }
func (l *Layout) localsSize() uint32  { return slotsSize(len(l.locals)) + l.lrefSize }

// threadRefSize is the bytes of MapThreadRefs' value.
func (l *Layout) threadRefSize() uint32 { return max(l.trefSize, 8) }

// ref returns where a by-reference global or clause-local lives: its
// header's offset in its map's value, and its storage.
func (l *Layout) ref(scope uint8, id uint32) (uint32, varRef, bool) {
	if scope == dif.ScopeLocal {
		r, ok := l.lrefs[id]
		return slotsSize(len(l.locals)) + r.off, r, ok
	}
	r, ok := l.grefs[id]
	return slotsSize(len(l.globals)) + r.off, r, ok
}

// strBufSize is the bytes of MapStrBuf's value: the two strings scmp
// compares, or the frames bpf_get_stack writes.
func (l *Layout) strBufSize() uint32 { return max(2*l.strBufHalf(), 8*maxFrames) }

// strBufHalf is where the second string starts in MapStrBuf: each holds
// strsize bytes and a NUL.
func (l *Layout) strBufHalf() uint32 { return (l.strsize + 1 + 7) &^ 7 }

func slotsSize(n int) uint32 { return uint32(8 * max(n, 1)) }

// AggTouched is the bytes of an aggregation map's value after the
// aggregation's data: a word a CPU sets when it aggregates the key. A
// per-CPU hash entry made on one CPU is zero on the others; the word
// tells them from a CPU whose data is zero (sum(0)).
const AggTouched = 8

// AddProbe adds the DIFOs of p's clauses, and sizes the record buffer
// and the aggregations' maps for their records.
func (l *Layout) AddProbe(p *ProbeProgram) error {
	for _, st := range p.Sites {
		for _, o := range st.difos() {
			if err := l.Add(o); err != nil {
				return err
			}
		}
	}
	for _, cs := range [][]Clause{p.Clauses, p.Error} {
		for _, c := range cs {
			for _, o := range difos(c.ECB) {
				if err := l.Add(o); err != nil {
					return err
				}
			}
			ep := c.EP
			need := ep.Needed
			for i, a := range ep.Actions {
				need = max(need, a.Offset+a.Size)
				if !a.IsAgg() {
					continue
				}
				// The map's value is built after the data.
				need = max(need, a.Offset+a.Size+AggTouched)
				k := keyOf(c.ECB, ep, i)
				if old, ok := l.aggKeys[a.AggID]; ok {
					old.merge(k)
				} else {
					l.aggKeys[a.AggID] = k
				}
			}
			if need > maxRecord {
				return fmt.Errorf("bpf: EPID %d: a firing of %d bytes is over %d", ep.EPID, need, maxRecord)
			}
			// A byte more, for a string's NUL after the last record.
			l.recSize = max(l.recSize, RecPrefix+(need+1+7)&^7)
		}
	}
	return nil
}

// maxRecord bounds a firing's records, which are built in an entry of
// MapRec (an array with an entry per CPU, as a per-CPU map's value holds
// at most 32 KiB) and copied from MapZero's zeroes.
const maxRecord = 1<<20 - RecPrefix

// zeroSize is the bytes of MapZero: as many as the largest copy of
// zeroes, into the record buffer, the clause-locals or a new by-reference
// thread-local.
func (l *Layout) zeroSize() uint32 {
	n := max(l.recSize, l.localsSize(), l.threadRefSize(), 8)
	for _, a := range l.assocs {
		n = max(n, l.keySize(a), l.valueSize(a))
	}
	return n
}

// maxKeySize is the bytes of MapKey's value: the largest key.
func (l *Layout) maxKeySize() uint32 {
	n := uint32(8)
	for _, a := range l.assocs {
		n = max(n, l.keySize(a))
	}
	return n
}

// elemSize is the bytes of every by-reference element of associative
// arrays, 0 if there is none.
func (l *Layout) elemSize() uint32 {
	for _, a := range l.assocs {
		if a.ref {
			return l.valueSize(a)
		}
	}
	return 0
}
