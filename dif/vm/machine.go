package vm

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/kdtrace/kdtrace/dif"
)

// Config holds a machine's memory and the options that bear on DIF. The
// zero value is a machine with kernel privilege, dtrace's default sizes
// and no memory outside its own.
type Config struct {
	// Kernel is the memory ld*, rld* and the subroutines read outside
	// the machine's own; nil faults every such load.
	Kernel Memory
	// User is the traced process's memory: uld*, copyin, copyinstr,
	// copyinto, copyout and copyoutstr use it; nil faults them.
	User Memory
	// StrSize is the strsize option, 256 when zero.
	StrSize uint32
	// ScratchSize is how many bytes of scratch memory a clause may
	// allocate, 1 MiB when zero.
	ScratchSize uint64
	// DynVarSize is the dynvarsize option: the bytes dynamic variables
	// (associative arrays and thread-locals) may take, keys included,
	// 1 MiB when zero. A store beyond it is dropped, as dtrace drops it.
	DynVarSize uint64
	// NSpec is the nspec option: how many speculations speculation()
	// may hand out, 1 when zero.
	NSpec uint32
	// Restricted runs DIF without kernel privilege: rld* and the
	// subroutines may read only the machine's own memory, and fault
	// KPRIV elsewhere.
	Restricted bool
	// Seed seeds rand().
	Seed uint64
}

// Defaults of Config.
const (
	DefaultStrSize     = 256
	DefaultScratchSize = 1 << 20
	DefaultDynVarSize  = 1 << 20
)

// strSizeDefault is dtrace_strsize_default: pushtr of a string with no
// size scans this far, whatever the strsize option says.
const strSizeDefault = 256

// A Machine runs the DIFOs of one program and holds the state they
// share: variables, dynamic variables, scratch memory, and the string
// tables of the DIFOs it has run, all in its own address space.
// A Machine is not safe for concurrent use.
type Machine struct {
	cfg Config
	mem space

	val   *dif.Validator
	progs map[*dif.Object]*prog
	// defs are the user variables of the DIFOs run so far, as the
	// kernel's consumer state holds them: the first definition of a
	// global or clause-local, the latest of a thread-local.
	defs map[varKey]dif.Var

	globals map[uint32]uint64 // by-value globals
	locals  map[uint32]uint64 // by-value clause-locals
	statics map[varKey]*static
	dyn     map[string]*dynvar
	dynUsed uint64
	drops   uint64

	scratch    []byte
	scratchAt  uint64 // address of scratch[0]
	scratchPtr uint64 // bytes of scratch allocated

	strtok, strtokLimit uint64
	rng                 [2]uint64
	specs               []bool // whether each speculation is active
	specUnavail         uint64
}

type varKey struct {
	scope uint8
	id    uint32
}

// static is a by-reference global or clause-local variable
// (dtrace_statvar_t): its storage, and whether a store of NULL left it
// referring to nothing.
type static struct {
	addr uint64
	data []byte
	null bool
}

// dynvar is a dynamic variable's storage.
type dynvar struct {
	addr uint64
	data []byte
	cost uint64
}

// prog is a DIFO as the machine runs it: a validated copy.
type prog struct {
	code  []dif.Instr
	ints  []uint64
	strs  uint64 // address of the string table
	nstrs uint64
	ret   dif.Type
}

// errNoSpace reports that every slot of the machine's address space is
// taken.
var errNoSpace = errors.New("vm: address space exhausted")

// New returns a machine with no variables set. cfg may be nil.
func New(cfg *Config) *Machine {
	m := &Machine{
		progs:   make(map[*dif.Object]*prog),
		defs:    make(map[varKey]dif.Var),
		globals: make(map[uint32]uint64),
		locals:  make(map[uint32]uint64),
		statics: make(map[varKey]*static),
		dyn:     make(map[string]*dynvar),
	}
	if cfg != nil {
		m.cfg = *cfg
	}
	if m.cfg.StrSize == 0 {
		m.cfg.StrSize = DefaultStrSize
	}
	if m.cfg.ScratchSize == 0 {
		m.cfg.ScratchSize = DefaultScratchSize
	}
	if m.cfg.DynVarSize == 0 {
		m.cfg.DynVarSize = DefaultDynVarSize
	}
	if m.cfg.NSpec == 0 {
		m.cfg.NSpec = 1
	}
	m.specs = make([]bool, m.cfg.NSpec)
	m.val = dif.NewValidator(dif.Limits{KernelOnly: true, StrSize: m.cfg.StrSize})
	// Seed xoroshiro128+ through splitmix64, never with all zeroes.
	s := m.cfg.Seed
	for i := range m.rng {
		s += 0x9e3779b97f4a7c15
		z := s
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		m.rng[i] = z ^ z>>31
	}
	return m
}

// BeginFiring starts a probe firing: clause-local variables go back to
// zero, strtok() forgets its string, and scratch memory is freed.
func (m *Machine) BeginFiring() {
	clear(m.locals)
	for k, s := range m.statics {
		if k.scope == dif.ScopeLocal {
			clear(s.data)
			s.null = false
		}
	}
	m.strtok, m.strtokLimit = 0, 0
	m.BeginClause()
}

// BeginClause starts a clause (an ECB) within a firing: its scratch
// memory is freed, as the kernel frees it for each ECB. The DIFOs of
// one clause — predicate and actions — share scratch memory. Freed
// scratch reads as zeroes.
func (m *Machine) BeginClause() {
	clear(m.scratch[:m.scratchPtr])
	m.scratchPtr = 0
}

// Drops returns how many stores to dynamic variables found no room
// (dtrace's dynamic variable drops).
func (m *Machine) Drops() uint64 { return m.drops }

// prepare returns the machine's copy of o, validating it the first
// time as the kernel validates a DIFO it loads, with the variables of
// the DIFOs before it.
func (m *Machine) prepare(o *dif.Object) (*prog, error) {
	if p, ok := m.progs[o]; ok {
		return p, nil
	}
	if o == nil {
		return nil, fmt.Errorf("vm: no DIFO")
	}
	c := *o
	c.Code = append([]dif.Instr(nil), o.Code...)
	c.Ints = append([]uint64(nil), o.Ints...)
	c.Strs = append([]byte(nil), o.Strs...)
	c.Vars = append([]dif.Var(nil), o.Vars...)
	if err := m.val.Validate(&c); err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	p := &prog{code: c.Code, ints: c.Ints, ret: c.Ret, nstrs: uint64(len(c.Strs))}
	if p.strs = m.mem.add(c.Strs, false); p.strs == 0 {
		return nil, errNoSpace
	}
	for _, v := range c.Vars {
		if v.ID < dif.VarOtherUBase {
			continue
		}
		v.Type = m.effType(v.Type)
		k := varKey{v.Scope, v.ID}
		if _, ok := m.defs[k]; !ok || v.Scope == dif.ScopeThread {
			m.defs[k] = v
		}
	}
	m.progs[o] = p
	return p, nil
}

// effType gives a string of size 0 the string size, as the kernel's
// loader does.
func (m *Machine) effType(t dif.Type) dif.Type {
	if t.Kind == dif.TypeString && t.Size == 0 {
		t.Size = m.cfg.StrSize
	}
	return t
}

// varType returns the type of a user variable. A variable no DIFO has
// declared is an 8-byte integer.
func (m *Machine) varType(scope uint8, id uint32) dif.Type {
	if v, ok := m.defs[varKey{scope, id}]; ok {
		return v.Type
	}
	return dif.IntType(8)
}

// byRef reports whether a variable of type t holds a reference
// (DIF_TF_BYREF).
func byRef(t dif.Type) bool { return t.Flags&dif.TFByRef != 0 }

// static returns the storage of a by-reference global or clause-local,
// allocating it zeroed on first use.
func (m *Machine) static(scope uint8, id uint32, t dif.Type) (*static, error) {
	k := varKey{scope, id}
	if s, ok := m.statics[k]; ok {
		return s, nil
	}
	s := &static{data: make([]byte, t.Size)}
	if s.addr = m.mem.add(s.data, true); s.addr == 0 {
		return nil, errNoSpace
	}
	m.statics[k] = s
	return s, nil
}

// Dynamic variable operations (DTRACE_DYNVAR_*).
type dynOp int

const (
	dynNoAlloc dynOp = iota
	dynAlloc
	dynDealloc
)

// tuple is an entry of the tuple stack (dtrace_key_t): a value, or a
// reference to size bytes.
type tuple struct {
	value uint64
	size  uint64
}

// dynKey encodes a dynamic variable's key: its scope and id and the
// tuple, a reference by the bytes it refers to (dtrace_dynvar hashes
// and compares them so).
func (m *Machine) dynKey(scope uint8, id uint32, keys []tuple) (string, error) {
	b := make([]byte, 0, 8+9*len(keys))
	b = append(b, scope)
	b = binary.LittleEndian.AppendUint32(b, id)
	for _, k := range keys {
		if k.size == 0 {
			b = append(b, 'v')
			b = binary.LittleEndian.AppendUint64(b, k.value)
			continue
		}
		if err := m.canload(k.value, k.size); err != nil {
			return "", err
		}
		data, err := m.read(k.value, k.size)
		if err != nil {
			return "", err
		}
		b = append(b, 'r')
		b = binary.LittleEndian.AppendUint64(b, k.size)
		b = append(b, data...)
	}
	return string(b), nil
}

// dynvar looks a dynamic variable up (dtrace_dynvar): dynNoAlloc finds
// it, dynAlloc finds or makes it with size bytes of zeroes, dynDealloc
// frees it. It returns nil when the variable does not exist or, for
// dynAlloc, when there is no room (a drop).
func (m *Machine) dynvar(key string, size uint64, op dynOp) *dynvar {
	d := m.dyn[key]
	switch op {
	case dynNoAlloc:
		return d
	case dynDealloc:
		if d != nil {
			m.mem.remove(d.addr)
			m.dynUsed -= d.cost
			delete(m.dyn, key)
		}
		return nil
	}
	if d != nil {
		return d
	}
	cost := uint64(len(key)) + size
	if cost > m.cfg.DynVarSize-m.dynUsed {
		m.drops++
		return nil
	}
	d = &dynvar{data: make([]byte, size), cost: cost}
	if d.addr = m.mem.add(d.data, true); d.addr == 0 {
		m.drops++
		return nil
	}
	m.dynUsed += cost
	m.dyn[key] = d
	return d
}

// speculation makes the first inactive speculation active and returns
// its id, or returns 0 and counts the failure when all nspec are active
// (dtrace_speculation). Only commit() and discard(), which the machine
// does not run, make one inactive again.
func (m *Machine) speculation() uint64 {
	for i, active := range m.specs {
		if !active {
			m.specs[i] = true
			return uint64(i) + 1
		}
	}
	m.specUnavail++
	return 0
}

// SpecUnavail returns how many speculation() calls found no inactive
// speculation (dts_speculations_unavail), which dtrace reports as
// "speculative buffers unavailable".
func (m *Machine) SpecUnavail() uint64 { return m.specUnavail }

// Scratch memory.

func (m *Machine) scratchBase() uint64 {
	if m.scratch == nil {
		m.scratch = make([]byte, m.cfg.ScratchSize)
		m.scratchAt = m.mem.add(m.scratch, true)
	}
	return m.scratchAt
}

// inScratch reports whether n more bytes of scratch are free
// (DTRACE_INSCRATCH).
func (m *Machine) inScratch(n uint64) bool {
	m.scratchBase()
	return n <= m.cfg.ScratchSize-m.scratchPtr
}

// scratchNext returns the address of the next free byte of scratch
// (dtms_scratch_ptr) and the free memory from there.
func (m *Machine) scratchNext() (uint64, []byte) {
	return m.scratchBase() + m.scratchPtr, m.scratch[m.scratchPtr:]
}

// inScratchRange reports whether n bytes at addr lie in allocated
// scratch (dtrace_inscratch).
func (m *Machine) inScratchRange(addr, n uint64) bool {
	base := m.scratchBase()
	return addr >= base && addr+n >= addr && addr+n <= base+m.scratchPtr
}

// rand returns the next xoroshiro128+ number
// (dtrace_xoroshiro128_plus_next).
func (m *Machine) rand() uint64 {
	s0, s1 := m.rng[0], m.rng[1]
	r := s0 + s1
	s1 ^= s0
	m.rng[0] = (s0<<55 | s0>>9) ^ s1 ^ s1<<14
	m.rng[1] = s1<<36 | s1>>28
	return r
}
