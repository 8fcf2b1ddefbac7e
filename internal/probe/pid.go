package probe

import (
	"debug/elf"
	"fmt"
	"math"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/kdtrace/kdtrace/internal/amd64"
	"github.com/kdtrace/kdtrace/internal/debuginfo"
)

// maxPIDProbes is how many probes the pid providers of a catalog may
// make unless Config.MaxPIDProbes says otherwise, as fasttrap's default
// fasttrap-max-probes: a description that would make more fails
// (D_PROC_CREATEFAIL).
const maxPIDProbes = 250000

// A UserSite is where a pid probe goes in a process.
type UserSite struct {
	PID  int
	Path string // the object's file, as the process maps it
	// Addr and Size are the function's symbol value and size in the
	// object's file; Addr is 0 for an absolute address (function "-").
	Addr, Size uint64
	// Offset is the probe's offset from Addr, or its address for
	// function "-"; 0 for entry and return.
	Offset uint64
	Return bool
}

// A ProcError is the pid provider's refusal of a description, with the
// error tag and message dtrace's dt_pid.c gives it.
type procError struct {
	Tag string // D_PROC_BADPROV, D_PROC_BADPID, D_PROC_GRAB, D_PROC_NODEV, D_PROC_LIB, D_PROC_NAME, D_PROC_FUNC, D_PROC_OFF, D_PROC_ALIGN or D_PROC_CREATEFAIL
	Msg string
	Err error // the cause, if any
}

func (e *procError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *procError) Unwrap() error { return e.Err }

func procErrorf(tag string, cause error, format string, args ...any) *procError {
	return &procError{Tag: tag, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// A procSource finds processes: /proc on Linux.
type procSource interface {
	grab(pid int) (*process, error)
}

// A process is what the pid provider knows of one: the ELF objects it
// maps, in the order it maps them.
type process struct {
	pid     int
	objects []*procObject
	exec    *procObject // the executable, a.out
}

// A procObject is a mapped ELF file.
type procObject struct {
	path string // as mapped
	file string // where to read it from
	name string // the base name: the probe module

	once sync.Once
	syms *objSyms
	err  error

	usdtOnce sync.Once
	notes    []sdtNote // its USDT probe points
	dofArgs  map[provProbe]dofArgs
}

// makeProcProbes runs the pid provider's part of dt_setcontext: when
// d's provider ends in a digit and names no other provider, it takes
// the number as a process ID and makes the probes d asks of process
// pid<ID>, returning the description with its module in canonical form
// (a.out or a prefix like libc becomes the object's base name).
func (c *Catalog) makeProcProbes(q *query) (*query, error) {
	prov := q.Desc.Provider
	if prov == "" || !isDigit(prov[len(prov)-1]) {
		return q, nil
	}
	if _, ok := c.byName[prov]; ok {
		return q, nil
	}
	pid, err := pidOf(prov)
	if err != nil {
		return nil, err
	}
	if c.procs == nil {
		return nil, procErrorf("D_PROC_NODEV", nil, "pid provider is not installed on this system")
	}
	name := "pid" + strconv.Itoa(pid)
	if Glob(name, prov) {
		p, err := c.pidProvider(pid)
		if err != nil {
			return nil, err
		}
		d, err := p.create(q.Desc, &c.made, c.maxPID, c.warn)
		if err != nil {
			return nil, err
		}
		q = newQuery(d)
	}
	if name != prov {
		// A USDT provider of the process, as dt_pid_create_usdt_probes
		// makes them: all of the process's, from its objects' notes.
		if err := c.makeUSDT(pid); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// Grab takes process pid into the catalog, as dtrace -p grabs it: its
// USDT providers are listed from then on, as dtrace lists those whose
// probes the process's helpers registered. Its pid provider's probes
// are still made as descriptions ask for them. The error is a
// *ProcError.
func (c *Catalog) Grab(pid int) error {
	if c.procs == nil {
		return procErrorf("D_PROC_NODEV", nil, "pid provider is not installed on this system")
	}
	return c.makeUSDT(pid)
}

// makeUSDT adds the USDT providers of process pid to the catalog, the
// first time it is asked.
func (c *Catalog) makeUSDT(pid int) error {
	p, err := c.pidProvider(pid)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.usdtDone[pid] {
		return nil
	}
	if c.usdtDone == nil {
		c.usdtDone = map[int]bool{}
	}
	c.usdtDone[pid] = true
	for _, u := range usdtProviders(p.proc) {
		c.users = append(c.users, u)
	}
	return nil
}

// ObjectFile returns the file of the object module of process pid, as
// the pid provider finds it for pidPID:module:f:entry (a.out, a base
// name or a prefix of one), read through the process's root. It returns
// "" when the process maps no such object; an error when the process
// cannot be grabbed, as a *ProcError.
func (c *Catalog) ObjectFile(pid int, module string) (string, error) {
	if c.procs == nil {
		return "", procErrorf("D_PROC_NODEV", nil, "pid provider is not installed on this system")
	}
	p, err := c.pidProvider(pid)
	if err != nil {
		return "", err
	}
	if o := p.proc.object(module); o != nil {
		return o.file, nil
	}
	return "", nil
}

// pidOf returns the process ID at the end of a provider name, as
// dt_pid_get_pid reads it.
func pidOf(prov string) (int, error) {
	i := len(prov)
	for i > 0 && isDigit(prov[i-1]) {
		i--
	}
	if i == 0 {
		return 0, procErrorf("D_PROC_BADPROV", nil, "'%s' is not a valid provider", prov)
	}
	n, err := strconv.ParseInt(prov[i:], 10, 64)
	// strtol's long goes into a pid_t.
	if err != nil || int32(n) <= 0 {
		return 0, procErrorf("D_PROC_BADPID", nil, "'%s' does not contain a valid pid", prov)
	}
	return int(int32(n)), nil
}

// pidProvider returns the pid provider of process pid, grabbing the
// process the first time.
func (c *Catalog) pidProvider(pid int) (*pidProvider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.pid[pid]; ok {
		return p, nil
	}
	proc, err := c.procs.grab(pid)
	if err != nil {
		return nil, procErrorf("D_PROC_GRAB", err, "failed to grab process %d", pid)
	}
	p := &pidProvider{name: "pid" + strconv.Itoa(pid), pid: pid, proc: proc, done: map[Desc]createResult{}, have: map[Desc]bool{}, debugFile: c.debugFile}
	c.pid[pid] = p
	c.pids = append(c.pids, p)
	return p, nil
}

// pidProvider is the pid provider of one process: function entry and
// return probes and probes at instruction offsets, named in hex, made
// on demand as dtrace's dt_pid.c makes them. Its probes have no typed
// arguments.
type pidProvider struct {
	name string
	pid  int

	proc *process // guarded by mu: Catalog.Refresh reads it again
	// debugFile finds a stripped object's debug file (Config.DebugFile).
	debugFile func(string) (string, error)

	mu     sync.Mutex
	probes []*Probe
	have   map[Desc]bool
	done   map[Desc]createResult // descriptions already made
}

type createResult struct {
	d   Desc
	err error
}

func (p *pidProvider) Name() string           { return p.name }
func (p *pidProvider) Attributes() attributes { return pidAttr }

func (p *pidProvider) Probes(q *query, yield func(*Probe) bool) error {
	p.mu.Lock()
	probes := p.probes
	p.mu.Unlock()
	for _, pr := range probes {
		if q.matchesMFN(pr.Module, pr.Function, pr.Name) && !yield(pr) {
			break
		}
	}
	return nil
}

// A pidMaker makes the probes of one description, as
// dt_pid_create_pid_probes.
type pidMaker struct {
	p          *pidProvider
	made       *atomic.Int64 // probes made by all the catalog's pid providers
	max        int64         // the most they may make
	mod        string
	fn, name   string
	modLiteral bool // the module was given, and not as a glob
	matched    int
	// refused counts the functions a glob named whose entry and
	// return probes were left out, uprobes refusing their first
	// instruction; example is one of them.
	refused int
	example string
}

// create makes the probes d asks for and returns d with its module in
// canonical form.
// A description is made once; what it leaves out is said once, to warn.
func (p *pidProvider) create(d Desc, made *atomic.Int64, max int64, warn func(error)) (Desc, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r, ok := p.done[d]; ok {
		return r.d, r.err
	}
	m := &pidMaker{p: p, made: made, max: max, mod: or(d.Module, "*"), fn: or(d.Function, "*"), name: or(d.Name, "*")}
	out, err := m.create(d)
	p.done[d] = createResult{out, err}
	if err == nil && m.refused > 0 && warn != nil {
		what := fmt.Sprintf("%d functions left out (%s among them): uprobes refuse their first instruction", m.refused, m.example)
		if m.refused == 1 {
			what = fmt.Sprintf("function %s left out: uprobes refuse its first instruction", m.example)
		}
		warn(fmt.Errorf("%s:%s:%s:%s: %s (%s)", p.name, or(out.Module, "*"), m.fn, m.name, what, refusedWhy))
	}
	return out, err
}

func (m *pidMaker) create(d Desc) (Desc, error) {
	p := m.p
	if m.fn == "-" {
		if d.Module == "" {
			d.Module, m.mod = "a.out", "a.out"
		} else if isGlob(m.mod) || p.proc.object(m.mod) != p.proc.exec || p.proc.exec == nil {
			return d, procErrorf("D_PROC_LIB", nil, "only the a.out module is valid with the '-' function")
		}
		if isGlob(m.name) {
			return d, procErrorf("D_PROC_NAME", nil, "only individual addresses may be specified with the '-' function")
		}
	}
	if isGlob(m.mod) {
		for _, o := range p.proc.objects {
			if Glob(o.path, m.mod) || Glob(o.name, m.mod) {
				if err := m.perObject(o); err != nil {
					return d, err
				}
			}
		}
		return d, nil
	}
	o := p.proc.object(m.mod)
	if o == nil {
		// No such object: no probes, and D_PDESC_ZERO from the match.
		return d, nil
	}
	d.Module, m.mod = o.name, o.name
	m.modLiteral = true
	return d, m.perObject(o)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// object returns the object called name, as libproc's proc_name2map
// finds it: by base name, then by a prefix of one (libc for
// libc.so.6), then a.out for the executable.
func (proc *process) object(name string) *procObject {
	if name == "" {
		return nil
	}
	for _, o := range proc.objects {
		if o.name == name {
			return o
		}
	}
	for _, o := range proc.objects {
		if strings.HasPrefix(o.name, name) {
			return o
		}
	}
	if name == "a.out" {
		return proc.exec
	}
	return nil
}

// perObject makes the probes of one object, as dt_pid_per_mod.
func (m *pidMaker) perObject(o *procObject) error {
	syms, err := o.symbols()
	if err != nil {
		return procErrorf("D_PROC_CREATEFAIL", err, "failed to read the symbols of %s", o.path)
	}
	if !isGlob(m.fn) {
		s, ok := syms.lookup(m.fn, m.p.debugFile)
		if !ok {
			switch {
			case m.fn == "-":
				s = objSym{name: "-", size: math.MaxUint64, fn: true, defined: true}
			case m.modLiteral:
				return procErrorf("D_PROC_FUNC", nil, "failed to lookup '%s' in module '%s'", m.fn, m.mod)
			default:
				return nil
			}
		}
		if !s.fn || !s.defined || s.size == 0 {
			return nil
		}
		return m.perSym(o, syms, s, m.fn)
	}
	before := m.matched
	for _, tab := range [][]objSym{syms.symtab, syms.dynsym} {
		var last objSym
		taken := false
		for _, s := range tab {
			if s.size == 0 {
				continue
			}
			if taken && s.value == last.value && s.size == last.size {
				continue // an alias of the function just taken
			}
			if s.name == "_init" || s.name == "_fini" {
				continue
			}
			if taken = Glob(s.name, m.fn); taken {
				last = s
				if err := m.perSym(o, syms, s, s.name); err != nil {
					return err
				}
			}
		}
		if m.matched != before {
			break // the dynamic symbols only when the others matched none
		}
	}
	return nil
}

// perSym makes the probes of one function, as dt_pid_per_sym.
func (m *pidMaker) perSym(o *procObject, syms *objSyms, s objSym, fn string) error {
	dash := fn == "-"
	n := 0
	wantRet, wantEntry := !dash && Glob("return", m.name), !dash && Glob("entry", m.name)
	if (wantRet || wantEntry) && syms.entryRefused(s) {
		// A glob leaves out what cannot be traced, as it does
		// offsets; the probe named alone is refused.
		if !isGlob(m.fn) && !isGlob(m.name) {
			return procErrorf("D_PROC_CREATEFAIL", nil, "failed to create probes for '%s': uprobes refuse its first instruction (%s)", fn, refusedWhy)
		}
		wantRet, wantEntry = false, false
		m.refused++
		if m.example == "" {
			m.example = fn
		}
		if !isGlob(m.name) {
			return nil // entry or return: no offsets asked for
		}
	}
	if wantRet {
		if err := m.add(o, fn, "return", s, 0, true); err != nil {
			return err
		}
		n++
	}
	if wantEntry {
		if err := m.add(o, fn, "entry", s, 0, false); err != nil {
			return err
		}
		n++
	}
	glob := isGlob(m.name)
	switch {
	case !glob && n == 0:
		off, ok := strtoull16(m.name)
		if !ok {
			return procErrorf("D_PROC_NAME", nil, "'%s' is an invalid probe name", m.name)
		}
		if off >= s.size {
			return procErrorf("D_PROC_OFF", nil, "offset 0x%x outside of function '%s'", off, fn)
		}
		if !dash {
			offs, err := syms.offsets(s)
			if err != nil {
				return procErrorf("D_PROC_CREATEFAIL", err, "failed to create probe at '%s+0x%x'", fn, off)
			}
			if i := sort.Search(len(offs), func(i int) bool { return offs[i] >= off }); i == len(offs) || offs[i] != off {
				return procErrorf("D_PROC_ALIGN", nil, "offset 0x%x is not aligned on an instruction", off)
			}
		}
		if err := m.add(o, fn, strconv.FormatUint(off, 16), s, off, false); err != nil {
			return err
		}
		n++
	case glob && !dash:
		offs, err := syms.offsets(s)
		if err != nil {
			return procErrorf("D_PROC_CREATEFAIL", err, "failed to create offset probes in '%s'", fn)
		}
		for _, off := range offs {
			name := strconv.FormatUint(off, 16)
			// A glob leaves out what cannot be traced; the offset
			// named alone is refused where it is attached.
			if syms.untraceable(s.value + off) {
				continue
			}
			if Glob(name, m.name) {
				if err := m.add(o, fn, name, s, off, false); err != nil {
					return err
				}
			}
		}
		n++
	}
	m.matched += n
	return nil
}

// add makes one probe unless it exists.
func (m *pidMaker) add(o *procObject, fn, name string, s objSym, off uint64, ret bool) error {
	p := m.p
	d := Desc{p.name, o.name, fn, name}
	if p.have[d] {
		return nil
	}
	if m.made.Add(1) > m.max {
		m.made.Add(-1)
		return procErrorf("D_PROC_CREATEFAIL", nil, "failed to create probes in '%s': the pid providers' limit of %d probes is reached", fn, m.max)
	}
	site := &UserSite{PID: p.proc.pid, Path: o.path, Addr: s.value, Size: s.size, Offset: off, Return: ret}
	if fn == "-" {
		site.Addr, site.Size = 0, 0
	}
	p.have[d] = true
	p.probes = append(p.probes, &Probe{Provider: d.Provider, Module: d.Module, Function: d.Function, Name: d.Name, Detail: site})
	return nil
}

// strtoull16 reads s as strtoull(s, &end, 16) does and reports whether
// it read all of it: leading blanks, a sign and 0x are allowed.
func strtoull16(s string) (uint64, bool) {
	t := strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg, t = t[0] == '-', t[1:]
	}
	if len(t) > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && isHex(t[2]) {
		t = t[2:]
	}
	if t == "" {
		return 0, s == "" // strtoull("") reads nothing and ends at once
	}
	v, err := strconv.ParseUint(t, 16, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange && allHex(t) {
			v = math.MaxUint64 // ERANGE: dtrace does not check errno
		} else {
			return 0, false
		}
	}
	if neg {
		v = -v
	}
	return v, true
}

func isHex(c byte) bool { return isDigit(c) || 'a' <= c|0x20 && c|0x20 <= 'f' }

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// objSyms are the function symbols of an object file.
type objSyms struct {
	file   string
	symtab []objSym // .symtab's functions, by address
	dynsym []objSym // .dynsym's, by address
	byName map[string]objSym
	progs  []*elf.Prog

	mu   sync.Mutex
	offs map[uint64][]uint64 // instruction offsets by function address
	bad  map[uint64]bool     // the addresses of the instructions decoded that uprobes cannot trace

	stripped  bool // the file has no .symtab
	debugOnce sync.Once
	debug     map[string]objSym // a stripped file's symbols, from its debug file
}

// untraceable reports whether the instruction at addr, in a function
// offsets has decoded, is one uprobes cannot trace: a syscall, or an
// instruction with a prefix they refuse.
func (s *objSyms) untraceable(addr uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bad[addr]
}

type objSym struct {
	name        string
	value, size uint64
	fn, defined bool
}

func (o *procObject) symbols() (*objSyms, error) {
	o.once.Do(func() { o.syms, o.err = readObjSyms(o.file) })
	return o.syms, o.err
}

func readObjSyms(file string) (*objSyms, error) {
	f, err := elf.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &objSyms{file: file, byName: map[string]objSym{}, offs: map[uint64][]uint64{}}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			s.progs = append(s.progs, p)
		}
	}
	conv := func(syms []elf.Symbol) []objSym {
		var out []objSym
		for _, e := range syms {
			os := objSym{name: e.Name, value: e.Value, size: e.Size,
				fn: elf.ST_TYPE(e.Info) == elf.STT_FUNC, defined: e.Section != elf.SHN_UNDEF}
			if os.fn && os.defined {
				out = append(out, os)
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].value < out[j].value })
		return out
	}
	st, _ := f.Symbols()
	dyn, _ := f.DynamicSymbols()
	s.stripped = f.Section(".symtab") == nil
	s.symtab, s.dynsym = conv(st), conv(dyn)
	// Lookups by name search the dynamic symbols first, as libproc's.
	for _, tab := range [][]elf.Symbol{st, dyn} {
		for _, e := range tab {
			if e.Name != "" {
				s.byName[e.Name] = objSym{name: e.Name, value: e.Value, size: e.Size,
					fn: elf.ST_TYPE(e.Info) == elf.STT_FUNC, defined: e.Section != elf.SHN_UNDEF}
			}
		}
	}
	return s, nil
}

// lookup finds a symbol by name. A name a stripped file's own tables
// lack is looked up in its debug file's symbol table, which kept the
// local functions: the pid rewrite of inlined functions names their
// callers, and a probe named alone can be made there, while patterns
// still match only the file's own symbols, as dtrace's.
func (s *objSyms) lookup(name string, debugFile func(string) (string, error)) (objSym, bool) {
	if sym, ok := s.byName[name]; ok || !s.stripped {
		return sym, ok
	}
	s.debugOnce.Do(func() { s.readDebugSymbols(debugFile) })
	sym, ok := s.debug[name]
	return sym, ok
}

// readDebugSymbols reads the symbol table of the file's separate debug
// file, if it has one that matches it, found by debugFile (nil: on the
// machine).
func (s *objSyms) readDebugSymbols(debugFile func(string) (string, error)) {
	if debugFile == nil {
		debugFile = func(file string) (string, error) { return debuginfo.DebugFile(file, debuginfo.Options{}) }
	}
	path, err := debugFile(s.file)
	if err != nil || path == s.file {
		return
	}
	f, err := elf.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	syms, _ := f.Symbols()
	s.debug = map[string]objSym{}
	for _, e := range syms {
		if e.Name != "" {
			s.debug[e.Name] = objSym{name: e.Name, value: e.Value, size: e.Size,
				fn: elf.ST_TYPE(e.Info) == elf.STT_FUNC, defined: e.Section != elf.SHN_UNDEF}
		}
	}
}

// offsets returns the offsets of the instructions of function sym,
// decoding its code once.
func (s *objSyms) offsets(sym objSym) ([]uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if offs, ok := s.offs[sym.value]; ok {
		return offs, nil
	}
	code, err := s.code(sym)
	if err != nil {
		return nil, err
	}
	insts, err := amd64.Decode(code, sym.value)
	if err != nil {
		return nil, err
	}
	offs := make([]uint64, 0, len(insts))
	for _, in := range insts {
		if in.Op != amd64.Data && in.Addr >= sym.value && in.Addr-sym.value < sym.size {
			off := in.Addr - sym.value
			offs = append(offs, off)
			if _, refused := amd64.UprobeRefusedPrefix(code[off:]); refused || isSyscall(code[off:]) {
				if s.bad == nil {
					s.bad = map[uint64]bool{}
				}
				s.bad[in.Addr] = true
			}
		}
	}
	s.offs[sym.value] = offs
	return offs, nil
}

// refusedWhy says which instructions uprobes refuse.
const refusedWhy = "a lock or segment prefix, or a system call"

// entryRefused reports whether uprobes refuse the first instruction of
// sym, where its entry and return probes (a uretprobe is placed at the
// entry) would go.
func (s *objSyms) entryRefused(sym objSym) bool {
	head := min(sym.size, 16)
	code, err := s.code(objSym{name: sym.name, value: sym.value, size: head})
	if err != nil {
		return false // reading it again to attach says why
	}
	_, refused := amd64.UprobeRefusedPrefix(code)
	return refused || isSyscall(code)
}

// isSyscall reports whether code starts with a syscall instruction,
// after any prefixes. Linux's uprobes cannot trace one: the traced
// process crashes when the probe fires (Linux 6.18).
func isSyscall(code []byte) bool {
	for len(code) > 0 && (code[0]&0xf0 == 0x40 || code[0] == 0x66 || code[0] == 0x67 || code[0] == 0xf2 || code[0] == 0xf3) {
		code = code[1:]
	}
	return len(code) >= 2 && code[0] == 0x0f && code[1] == 0x05
}

// code reads the bytes of function sym from the file.
func (s *objSyms) code(sym objSym) ([]byte, error) {
	for _, p := range s.progs {
		if sym.value >= p.Vaddr && sym.value-p.Vaddr < p.Filesz && sym.size <= p.Filesz-(sym.value-p.Vaddr) {
			f, err := os.Open(s.file)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			code := make([]byte, sym.size)
			if _, err := f.ReadAt(code, int64(p.Off+sym.value-p.Vaddr)); err != nil {
				return nil, err
			}
			return code, nil
		}
	}
	return nil, fmt.Errorf("%s: function %s at %#x is in no loaded segment", s.file, sym.name, sym.value)
}

// baseName is a path's last element.
func baseName(p string) string { return path.Base(p) }
