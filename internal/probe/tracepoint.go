package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// tpProvider is Oracle's sdt or rawtp provider: a probe for each trace
// event of the running kernel that tracefs's available_events lists,
// sdt:<system>::<event> and rawtp:<system>::<event> (the module is the
// event's system, the function empty), but for the syscalls system (the
// syscall provider's) and the kprobes, uprobes and DTrace's own that
// tracers make. An sdt probe's arguments are the fields of the event's
// record, past the common ones, in its format's order, read by a perf
// event program; a rawtp probe's are the raw tracepoint's, as its
// prototype in BTF (btf_trace_<event>) declares them after the context.
//
// Listing reads available_events alone; an event's format file and BTF
// are read when its probe's arguments are typed or it is enabled.
type tpProvider struct {
	name string
	raw  bool // rawtp
	k    *kernel
	ev   *tpEvents

	mu     sync.Mutex
	fields map[tpEvent]tpFields // sdt: each event's format, once read
}

// A tpEvent names a trace event: system "sched", event "sched_switch".
type tpEvent struct{ system, event string }

type tpFields struct {
	fields []formatField
	err    error
}

// tpAttr are the attributes of Oracle's sdt and rawtp providers.
var tpAttr = attributes{
	Provider: Attr{evolving, evolving, classISA},
	Module:   Attr{private, private, classUnknown},
	Function: Attr{private, private, classUnknown},
	Name:     Attr{private, private, classISA},
	Args:     Attr{private, private, classISA},
}

// newTPProvider makes the sdt provider, or with raw the rawtp
// provider, called name, over the events ev lists.
func newTPProvider(name string, raw bool, k *kernel, ev *tpEvents) *tpProvider {
	return &tpProvider{name: name, raw: raw, k: k, ev: ev}
}

func (p *tpProvider) Name() string         { return p.name }
func (*tpProvider) Attributes() attributes { return tpAttr }

// tpEvents are the trace events of a tracefs, read once for both the
// sdt and rawtp providers. Reading available_events takes a millisecond,
// which a script naming BEGIN would pay, as any provider could have a
// probe of that name: a description naming one event is looked up in
// tracefs's events directory instead (named).
type tpEvents struct {
	// dirs are the places tracefs may be mounted on, in order of
	// preference.
	dirs []string

	once   sync.Once
	listed atomic.Bool // once has run: dir and events are set
	dir    string      // the tracefs that lists the events, or ""
	events []tpEvent

	mu      sync.Mutex
	sysRead bool                 // systems and sysDir are set
	sysDir  string               // the tracefs whose events directory lists systems, or ""
	systems []string             // the names in its events directory, as named looks events up in them
	byName  map[string][]tpEvent // the events named found in all systems, by name
}

func newTPEvents(dirs []string) *tpEvents { return &tpEvents{dirs: dirs} }

// list returns the events of the first tracefs that lists them, and
// that tracefs: none when tracefs is not mounted or cannot be read (it
// is root's alone), as Oracle's DTrace has none then.
func (e *tpEvents) list() (string, []tpEvent) {
	e.once.Do(func() {
		defer e.listed.Store(true)
		for _, dir := range e.dirs {
			data, err := os.ReadFile(filepath.Join(dir, "available_events"))
			if err != nil {
				continue
			}
			e.dir, e.events = dir, parseEvents(data)
			return
		}
	})
	return e.dir, e.events
}

// named returns the events called name, of the systems sys matches,
// without reading the list unless it is read already: in the events
// directory of the tracefs list would read, each system has a directory,
// and in it each event one, with an enable file if available_events
// lists the event (ftrace's own have none). A lookup in every system
// costs half of reading the list; the sdt and rawtp providers share it.
// ok is false when the list must be read after all: more than one event
// has the name, and the list orders them.
func (e *tpEvents) named(sys pattern, name string) (evs []tpEvent, ok bool) {
	if e.listed.Load() {
		return nil, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.sysRead {
		e.sysRead = true
		e.readSystems()
	}
	if e.sysDir == "" {
		return nil, false
	}
	if s, ok := sys.Literal(); ok {
		// Only a system of the directory: a description's module
		// is no path.
		if !slices.Contains(e.systems, s) {
			return nil, true
		}
		return e.lookup([]string{s}, name)
	}
	all, ok := e.byName[name]
	if !ok {
		if all, ok = e.lookup(e.systems, name); !ok {
			return nil, false
		}
		if e.byName == nil {
			e.byName = make(map[string][]tpEvent)
		}
		e.byName[name] = all
	}
	for _, ev := range all {
		if sys.Match(ev.system) {
			evs = append(evs, ev)
		}
	}
	return evs, len(evs) < 2
}

// lookup returns the events called name of systems, as named; the
// caller holds e.mu.
func (e *tpEvents) lookup(systems []string, name string) ([]tpEvent, bool) {
	dir, err := os.Open(filepath.Join(e.sysDir, "events"))
	if err != nil {
		return nil, false
	}
	defer dir.Close()
	// Looked up from the events directory: a path from the root
	// costs twice as much.
	fd := int(dir.Fd())
	var evs []tpEvent
	for _, system := range systems {
		if tracerSystem(system) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, system+"/"+name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		if unix.Fstatat(fd, system+"/"+name+"/enable", &st, unix.AT_SYMLINK_NOFOLLOW) == nil &&
			st.Mode&unix.S_IFMT == unix.S_IFREG {
			evs = append(evs, tpEvent{system, name})
		}
	}
	return evs, true
}

// readSystems sets sysDir to the tracefs list would read and systems to
// the names in its events directory (the files there among them, which
// hold no events), if it can be read; the caller holds e.mu.
func (e *tpEvents) readSystems() {
	for _, dir := range e.dirs {
		// The tracefs list would read: the first whose list can be
		// opened.
		f, err := os.Open(filepath.Join(dir, "available_events"))
		if err != nil {
			continue
		}
		f.Close()
		events, err := os.Open(filepath.Join(dir, "events"))
		if err != nil {
			return
		}
		names, err := events.Readdirnames(-1)
		events.Close()
		if err != nil {
			return
		}
		e.sysDir, e.systems = dir, names
		return
	}
}

func (p *tpProvider) list() []tpEvent {
	_, evs := p.ev.list()
	return evs
}

// parseEvents returns the events of an available_events file
// ("sched:sched_switch" a line) that the sdt and rawtp providers make
// probes of.
func parseEvents(data []byte) []tpEvent {
	// One string for the file: the events' names are its substrings,
	// rather than two allocations a line for some 2,300 lines.
	text := string(data)
	evs := make([]tpEvent, 0, strings.Count(text, "\n"))
	for line := range strings.Lines(text) {
		sys, ev, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			// Oracle's DTrace takes an event without a system to be
			// the kernel's own.
			sys, ev = KernelModule, sys
		}
		if ev == "" || tracerSystem(sys) {
			continue
		}
		evs = append(evs, tpEvent{sys, ev})
	}
	return evs
}

// tracerSystem tells whether the events of system sys are another
// provider's or a tracer's own: the syscall provider's, the kprobes and
// uprobes tracers make through tracefs, and those Oracle's DTrace makes
// for its pid and USDT probes (dt_pid, dt_<pid>_<provider>).
func tracerSystem(sys string) bool {
	switch sys {
	case "syscalls", "kprobes", "uprobes", "dt_pid":
		return true
	}
	if rest, ok := strings.CutPrefix(sys, "dt_"); ok {
		pid, prov, ok := strings.Cut(rest, "_")
		if _, err := strconv.Atoi(pid); ok && err == nil && prov != "" {
			return true
		}
	}
	return false
}

func (p *tpProvider) Probes(q *query, yield func(*Probe) bool) error {
	if !q.Function.Match("") {
		return nil
	}
	if name, ok := q.Name.Literal(); ok {
		if !eventName(name) {
			// tick-1s, a description of the profile provider's,
			// names no event: nothing is read for it.
			return nil
		}
		if evs, ok := p.ev.named(q.Module, name); ok {
			for _, e := range evs {
				if !yield(p.probe(e)) {
					break
				}
			}
			return nil
		}
	}
	for _, e := range p.list() {
		if q.Module.Match(e.system) && q.Name.Match(e.event) && !yield(p.probe(e)) {
			break
		}
	}
	return nil
}

// warm looks up the events q names in every system, as Probes will
// (Catalog.Warm); the sdt and rawtp providers share what it finds. A
// module given literally costs Probes one lookup, and is left to it.
func (p *tpProvider) warm(q *query) {
	if _, ok := q.Module.Literal(); ok || !q.Function.Match("") {
		return
	}
	if name, ok := q.Name.Literal(); ok && eventName(name) {
		p.ev.named(q.Module, name)
	}
}

// eventName reports whether name can name a trace event: the kernel
// makes functions of the names (trace_sched_switch), C identifiers.
func eventName(name string) bool {
	for _, c := range []byte(name) {
		if !(c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return name != ""
}

// tpProbe is an sdt or rawtp probe with its detail, allocated together.
type tpProbe struct {
	Probe
	tp Tracepoint
}

func (p *tpProvider) probe(e tpEvent) *Probe {
	pr := &tpProbe{
		Probe: Probe{Provider: p.name, Module: e.system, Name: e.event, args: p},
		tp:    Tracepoint{System: e.system, Event: e.event, Raw: p.raw, prov: p},
	}
	pr.Detail = &pr.tp
	return &pr.Probe
}

// maxTPArgs is the most arguments an sdt or rawtp probe has: D names
// ten, arg0 to arg9, and the runtime keeps ten for args[]. A record's
// fields, or a raw tracepoint's arguments, past the tenth are left out.
const maxTPArgs = 10

// A Tracepoint is the detail of an sdt or rawtp probe: the trace event
// System:Event it fires at, with the fields of the event's record (sdt)
// or, with Raw, the raw tracepoint's arguments (rawtp) as its own.
type Tracepoint struct {
	System, Event string
	Raw           bool
	prov          *tpProvider
}

// Site returns the SDT site the probe fires from, whose arguments are
// its own: the raw tracepoint's arguments for rawtp, as many as its
// prototype in BTF has (none when BTF does not have it); for sdt, the
// fields of the event's record (Record), ten at most (maxTPArgs), a scalar field's value, the
// address of an array's or another field's bytes in the record, and for
// a dynamic field (__data_loc, __rel_loc: a string or an array whose
// size varies) the address of its data.
func (t *Tracepoint) Site() (SDTSite, error) {
	st := SDTSite{System: t.System, Event: t.Event, Record: !t.Raw}
	if t.Raw {
		params, err := t.prov.rawParams(t.Event)
		if err != nil {
			return st, err
		}
		for i := range min(len(params), maxTPArgs) {
			st.Args = append(st.Args, fmt.Sprintf("arg%d", i))
		}
		return st, nil
	}
	fields, err := t.prov.format(tpEvent{t.System, t.Event})
	if err != nil {
		return st, err
	}
	for _, f := range fields[:min(len(fields), maxTPArgs)] {
		st.Args = append(st.Args, fieldExpr(f))
	}
	return st, nil
}

// format returns the fields of event e's record, read from its format
// file once.
func (p *tpProvider) format(e tpEvent) ([]formatField, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f, ok := p.fields[e]; ok {
		return f.fields, f.err
	}
	var f tpFields
	dir, _ := p.ev.list()
	if dir == "" {
		f.err = errors.New("tracefs cannot be read")
	} else {
		file := filepath.Join(dir, "events", e.system, e.event, "format")
		data, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("the kernel has no trace event %s:%s", e.system, e.event)
		}
		if err == nil {
			if f.fields, err = parseFormat(data); err != nil {
				err = fmt.Errorf("%s: %w", file, err)
			}
		}
		f.err = err
	}
	if p.fields == nil {
		p.fields = make(map[tpEvent]tpFields)
	}
	p.fields[e] = f
	return f.fields, f.err
}

// rawParams returns the types of the raw tracepoint event's arguments,
// its prototype's parameters after the context; nil when the kernel's
// BTF does not have it.
func (p *tpProvider) rawParams(event string) ([]types.Type, error) {
	kt, err := p.k.typesOf(KernelModule)
	if kt == nil || err != nil {
		return nil, err
	}
	tp, err := kt.LookupType("btf_trace_" + event)
	if tp == nil || err != nil {
		return nil, err
	}
	if ptr, ok := types.Resolve(tp).(*types.Pointer); ok {
		if f, ok := types.Resolve(ptr.Elem).(*types.Func); ok && len(f.Params) > 0 {
			return f.Params[1:], nil
		}
	}
	return nil, nil
}

func (p *tpProvider) probeArgs(pr *Probe) ([]types.Type, error) {
	if p.raw {
		params, err := p.rawParams(pr.Name)
		if params == nil || err != nil {
			return nil, err
		}
		// Each probe has its own slice, which its user may change.
		return append([]types.Type(nil), params[:min(len(params), maxTPArgs)]...), nil
	}
	fields, err := p.format(tpEvent{pr.Module, pr.Name})
	if len(fields) == 0 || err != nil {
		return nil, err
	}
	kt, err := p.k.typesOf(KernelModule)
	if err != nil {
		return nil, err
	}
	args := make([]types.Type, min(len(fields), maxTPArgs))
	for i, f := range fields[:len(args)] {
		args[i] = fieldType(f, kt)
	}
	return args, nil
}

// dynamicField returns the declaration of a dynamic field's data
// ("char[] filename" of "__data_loc char[] filename") and whether its
// location is relative to the field's end (__rel_loc) rather than the
// record's start (__data_loc); not ok for another field.
func dynamicField(f formatField) (decl string, rel, ok bool) {
	if decl, ok := strings.CutPrefix(f.decl, "__data_loc "); ok {
		return decl, false, true
	}
	if decl, ok := strings.CutPrefix(f.decl, "__rel_loc "); ok {
		return decl, true, true
	}
	return "", false, false
}

// fieldExpr returns the D expression of field f's argument, over arg0,
// the address of the event's record (see Tracepoint.Site).
func fieldExpr(f formatField) string {
	at := fmt.Sprintf("(arg0 + %d)", f.offset)
	if _, rel, ok := dynamicField(f); ok {
		// The field's low 16 bits are the data's offset, its high
		// ones the data's length.
		loc := fmt.Sprintf("(*(uint32_t *)%s & 0xffff)", at)
		if rel {
			return fmt.Sprintf("arg0 + %d + %s", f.offset+f.size, loc)
		}
		return "arg0 + " + loc
	}
	if strings.HasSuffix(f.decl, "]") {
		return at
	}
	switch f.size {
	case 1, 2, 4, 8:
		t := "uint"
		if f.signed {
			t = "int"
		}
		return fmt.Sprintf("*(%s%d_t *)%s", t, 8*f.size, at)
	}
	return at
}

// fieldType returns the type of field f's argument (see
// Tracepoint.Site), its declaration's types looked up in kt: a dynamic
// field's is a pointer to its data's element type ("char *" for
// "__data_loc char[] filename"); an array's has as many elements as
// fit its size, as a dimension given by a macro is not known; a field
// whose type is not found, or not of its size, is typed as an integer
// of its size and signedness, or an array of its bytes.
func fieldType(f formatField, kt KernelTypes) types.Type {
	if decl, _, ok := dynamicField(f); ok {
		elem := strings.TrimSuffix(strings.TrimSpace(strings.TrimSuffix(decl, f.name)), "[]")
		t := parseCType(elem+" _", kt)
		if t == nil {
			t = types.Void{}
		}
		return &types.Pointer{Elem: t}
	}
	if strings.HasSuffix(f.decl, "]") {
		elem := parseCType(f.decl[:strings.Index(f.decl, "[")], kt)
		if elem == nil || elem.Size() == 0 {
			return bytesType(f.size)
		}
		return &types.Array{Elem: elem, Len: int64(f.size) / elem.Size()}
	}
	if t := parseCType(f.decl, kt); t != nil && t.Size() == int64(f.size) {
		return t
	}
	if strings.Contains(f.decl, "*") && f.size == 8 {
		// A pointer to a type not found, or qualified in a way C's
		// declarations here do not know (void __seg_gs *).
		return types.VoidPtr
	}
	return intType(f.size, f.signed)
}

// intType returns D's integer type of size bytes and the signedness,
// as int32_t; an array of the bytes for another size.
func intType(size int, signed bool) types.Type {
	var t *types.Int
	switch size {
	case 1:
		t = types.UChar
		if signed {
			t = types.Char
		}
	case 2:
		t = types.UShort
		if signed {
			t = types.Short
		}
	case 4:
		t = types.UInt
		if signed {
			t = types.IntType
		}
	case 8:
		t = types.ULong
		if signed {
			t = types.Long
		}
	default:
		return bytesType(size)
	}
	name := fmt.Sprintf("uint%d_t", 8*size)
	if signed {
		name = name[1:]
	}
	return &types.Typedef{Module: "D", Name: name, Type: t}
}

// bytesType is the type of a field of size bytes known as bytes alone.
func bytesType(size int) types.Type {
	return &types.Array{Elem: intType(1, false), Len: int64(size)}
}
