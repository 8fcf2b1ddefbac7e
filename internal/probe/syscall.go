package probe

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// A Syscall is the system call a syscall probe traces.
type Syscall struct {
	Name   string // as the kernel's syscall tracepoints name it: "openat"
	Return bool
}

// syscallProvider is the syscall provider: syscall:vmlinux:name:entry
// and :return for each system call, as Oracle's DTrace for Linux names
// them. The calls are those whose handlers (__x64_sys_name) the kernel
// has, as every user can read them, so that a probe's ID does not
// depend on the privileges of who lists it: tracefs, where the
// kernel's syscall tracepoints are, is root's alone. Entry arguments
// are typed from the tracepoint's format where tracefs can be read,
// else from the architecture's table of those formats (zsysargs.go),
// else from the prototype of __do_sys_name where BTF has one (not for
// the many calls whose __do_sys_ is inlined): so the same for every
// user, mounted tracefs or not. Both return arguments are the return
// value, a long.
type syscallProvider struct {
	k *kernel
	// eventDirs are the places tracefs's events/syscalls may be, in
	// order of preference; none for an offline kernel.
	eventDirs []string
	// isCall says whether a handler's name is a system call of the
	// architecture: one of Config.Syscalls; nil for any.
	isCall func(name string) bool
	// numbered are Config.Syscalls, the calls the probes are numbered
	// over; nil to number them over the kernel's calls.
	numbered []string
	// handlers lists the names of the kernel's syscall handlers, its
	// own and not the weak stubs of the calls it was built without;
	// nil, or an error, for those of its function list.
	handlers func() ([]string, error)
	// table returns the declarations of the system call name's entry
	// arguments as its tracepoint's format gives them, from a table of
	// the architecture's; nil for an architecture without one.
	table func(name string) (decls []string, ok bool)

	once   sync.Once
	events string // the events/syscalls directory found, or ""
	names  []string
	err    error

	// entry caches entryArgs by system call: each description that
	// names a call asks again (a probe is made anew for each walk), and
	// a script of many clauses on read:entry would read and parse its
	// format file as many times.
	mu    sync.Mutex
	entry map[string]argTypes
}

type argTypes struct {
	types []types.Type
	err   error
}

func (*syscallProvider) Name() string           { return "syscall" }
func (*syscallProvider) Attributes() attributes { return kernelAttr }

// calls returns the system calls' names, sorted.
func (s *syscallProvider) calls() ([]string, error) {
	s.once.Do(func() {
		for _, dir := range s.eventDirs {
			if names, err := tracefsSyscalls(dir); err == nil && len(names) > 0 {
				s.events = dir
				break
			}
		}
		s.names, s.err = s.handlerSyscalls()
	})
	return s.names, s.err
}

// traced reports whether name is a call of this architecture with a
// tracepoint in tracefs: such a call has a handler of its own, so calls
// lists it, and a description that names it needs not read the kernel's
// symbols (/proc/kallsyms takes 55 ms of system time to read).
func (s *syscallProvider) traced(name string) bool {
	if s.isCall != nil && !s.isCall(name) || name == "" || strings.ContainsRune(name, '/') {
		return false
	}
	for _, dir := range s.eventDirs {
		if _, err := os.Stat(filepath.Join(dir, "sys_enter_"+name)); err == nil {
			return true
		}
	}
	return false
}

func tracefsSyscalls(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if name, ok := strings.CutPrefix(e.Name(), "sys_enter_"); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

func (s *syscallProvider) handlerSyscalls() ([]string, error) {
	var all []string
	if s.handlers != nil {
		all, _ = s.handlers()
	}
	if all == nil {
		l, err := s.k.module(KernelModule)
		if err != nil || l == nil {
			return nil, err
		}
		for i := range l.len() {
			all = append(all, l.name(i))
		}
	}
	var names []string
	for _, h := range all {
		if name, ok := strings.CutPrefix(h, s.k.syscallPrefix); ok && name != "ni_syscall" && (s.isCall == nil || s.isCall(name)) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return slices.Compact(names), nil
}

func (s *syscallProvider) Probes(q *query, yield func(*Probe) bool) error {
	entry, ret := q.Name.Match("entry"), q.Name.Match("return")
	if !entry && !ret || !q.Module.Match(KernelModule) {
		return nil
	}
	if fn, ok := q.Function.Literal(); ok && s.traced(fn) {
		if entry && !yield(s.probe(fn, false)) {
			return nil
		}
		if ret {
			yield(s.probe(fn, true))
		}
		return nil
	}
	names, err := s.calls()
	if err != nil {
		return err
	}
	if fn, ok := q.Function.Literal(); ok {
		i := sort.SearchStrings(names, fn)
		if i == len(names) || names[i] != fn {
			return nil
		}
		names = names[i : i+1]
	}
	for _, name := range names {
		if !q.Function.Match(name) {
			continue
		}
		if entry && !yield(s.probe(name, false)) {
			return nil
		}
		if ret && !yield(s.probe(name, true)) {
			return nil
		}
	}
	return nil
}

// places returns the calls whose probes, entry and return, hold the
// provider's places in Probes' order over all its probes: the
// architecture's calls where they are known, whether or not the kernel
// has each, so that a probe's place, and the number of places, cost no
// list of the kernel's handlers (a reading of /proc/kallsyms, seconds
// of system time under emulation); else the kernel's calls.
func (s *syscallProvider) places() ([]string, error) {
	if s.numbered != nil {
		return s.numbered, nil
	}
	return s.calls()
}

func (s *syscallProvider) probePlaces() (int, error) {
	names, err := s.places()
	return 2 * len(names), err
}

func (s *syscallProvider) probeIndex(d Desc) (int, bool) {
	if d.Provider != "syscall" || d.Module != KernelModule || d.Name != "entry" && d.Name != "return" {
		return 0, false
	}
	names, err := s.places()
	if err != nil {
		return 0, false
	}
	i, ok := slices.BinarySearch(names, d.Function)
	if !ok {
		return 0, false
	}
	if d.Name == "return" {
		return 2*i + 1, true
	}
	return 2 * i, true
}

func (s *syscallProvider) probeAt(at int) (Desc, bool) {
	names, err := s.places()
	if err != nil || at < 0 || at >= 2*len(names) {
		return Desc{}, false
	}
	name := names[at/2]
	if s.numbered != nil {
		// A call of the architecture the kernel may lack.
		calls, err := s.calls()
		if _, ok := slices.BinarySearch(calls, name); err != nil || !ok {
			return Desc{}, false
		}
	}
	d := Desc{Provider: "syscall", Module: KernelModule, Function: name, Name: "entry"}
	if at%2 == 1 {
		d.Name = "return"
	}
	return d, true
}

func (s *syscallProvider) countProbes(q *query) (int, error) {
	n := 0
	err := s.Probes(q, func(*Probe) bool { n++; return true })
	return n, err
}

// syscallProbe is a syscall probe and its detail, allocated together.
type syscallProbe struct {
	Probe
	call Syscall
}

func (s *syscallProvider) probe(name string, ret bool) *Probe {
	p := &syscallProbe{
		Probe: Probe{Provider: "syscall", Module: KernelModule, Function: name, Name: "entry", args: s},
		call:  Syscall{Name: name, Return: ret},
	}
	if ret {
		p.Name = "return"
	}
	p.Detail = &p.call
	return &p.Probe
}

func (s *syscallProvider) probeArgs(p *Probe) ([]types.Type, error) {
	if p.Name == "return" {
		return []types.Type{types.Long, types.Long}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.entry[p.Function]
	if !ok {
		a.types, a.err = s.entryArgs(p.Function)
		if s.entry == nil {
			s.entry = make(map[string]argTypes)
		}
		s.entry[p.Function] = a
	}
	// Each probe has its own slice, which its user may change.
	return slices.Clone(a.types), a.err
}

// entryArgs returns the types of the arguments of the system call name.
func (s *syscallProvider) entryArgs(name string) ([]types.Type, error) {
	kt, err := s.k.typesOf(KernelModule)
	if err != nil {
		return nil, err
	}
	// A call without a tracepoint (one whose number the kernel's
	// table leaves to sys_ni_syscall) is typed from BTF.
	decls, ok, err := s.format(name)
	if err != nil {
		return nil, err
	}
	if !ok && s.table != nil {
		decls, ok = s.table(name)
	}
	if ok {
		args := make([]types.Type, len(decls))
		for i, d := range decls {
			args[i] = parseCType(d, kt)
		}
		return args, nil
	}
	if kt == nil {
		return nil, nil
	}
	f, _, err := kt.LookupFunc("__do_sys_" + name)
	if f == nil || err != nil {
		return nil, err
	}
	return f.Params, nil
}

// format returns the declarations of the arguments in the format file
// of name's entry tracepoint; not ok if tracefs cannot be read or has
// no such tracepoint.
func (s *syscallProvider) format(name string) (decls []string, ok bool, err error) {
	if s.events == "" {
		return nil, false, nil
	}
	file := filepath.Join(s.events, "sys_enter_"+name, "format")
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if decls, err = formatFields(data); err != nil {
		return nil, false, fmt.Errorf("%s: %w", file, err)
	}
	return decls, true, nil
}

// syscallDecls are a system call's entry arguments as its tracepoint's
// format declares them: an entry of a generated table (zsysargs.go).
type syscallDecls struct {
	name  string
	decls []string
}

// amd64Syscall returns the declarations of the x86-64 system call
// name's entry arguments from amd64SyscallArgs; not ok if the table
// has no such call.
func amd64Syscall(name string) ([]string, bool) {
	i, ok := slices.BinarySearchFunc(amd64SyscallArgs[:], name, func(c syscallDecls, name string) int {
		return strings.Compare(c.name, name)
	})
	if !ok {
		return nil, false
	}
	return amd64SyscallArgs[i].decls, true
}

// syscallTable returns the table of the system calls' entry arguments
// of the architecture arch (GOARCH's names); nil for one without.
func syscallTable(arch string) func(name string) ([]string, bool) {
	if arch == "amd64" {
		return amd64Syscall
	}
	return nil
}

// formatFields returns the declarations of the fields of a tracepoint
// format file that follow the common ones and __syscall_nr: the
// arguments of a syscall tracepoint, as "const char * filename".
func formatFields(data []byte) ([]string, error) {
	fields, err := parseFormat(data)
	if err != nil {
		return nil, err
	}
	var decls []string
	for _, f := range fields {
		if f.name != "__syscall_nr" {
			decls = append(decls, f.decl)
		}
	}
	return decls, nil
}

// A formatField is a field of a trace event's record, as its format
// file describes it.
type formatField struct {
	// decl declares the field, as "char oldcomm[16]" or "__data_loc
	// char[] filename"; name is its name, "oldcomm".
	decl, name   string
	offset, size int
	signed       bool
}

// parseFormat returns the fields of a trace event's format file that
// follow the common ones (common_type, common_pid, …), in order.
func parseFormat(data []byte) ([]formatField, error) {
	var fields []formatField
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		rest, ok := strings.CutPrefix(line, "field:")
		if !ok {
			continue
		}
		var f formatField
		f.decl, rest, ok = strings.Cut(rest, ";")
		if !ok {
			return nil, fmt.Errorf("field line without ';': %q", line)
		}
		// The name is the last word, before any array's dimensions
		// ("char oldcomm[16]", but "__data_loc char[] filename").
		name := f.decl
		for strings.HasSuffix(name, "]") && strings.Contains(name, "[") {
			name = strings.TrimSpace(name[:strings.LastIndex(name, "[")])
		}
		f.name = name[strings.LastIndexAny(name, " *")+1:]
		if strings.HasPrefix(f.name, "common_") {
			continue
		}
		for _, kv := range strings.Split(rest, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), ":")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("field %s: %s: %w", f.name, k, err)
			}
			switch k {
			case "offset":
				f.offset = n
			case "size":
				f.size = n
			case "signed":
				f.signed = n != 0
			}
		}
		fields = append(fields, f)
	}
	return fields, sc.Err()
}

// parseCType returns the type of the C declaration decl ("const char *
// filename", "unsigned long len", "char *const * argv"), looking names
// up in kt; nil when a name is not found or the declaration is not of
// this simple form. The declared name is dropped.
func parseCType(decl string, kt KernelTypes) types.Type {
	toks := strings.Fields(strings.ReplaceAll(decl, "*", " * "))
	if len(toks) < 2 {
		return nil
	}
	toks = toks[:len(toks)-1] // the name
	var base []string
	var q types.Qual
	i := 0
	for ; i < len(toks) && toks[i] != "*"; i++ {
		switch toks[i] {
		case "const":
			q |= types.Const
		case "volatile":
			q |= types.Volatile
		default:
			base = append(base, toks[i])
		}
	}
	if len(base) == 0 {
		return nil
	}
	var t types.Type
	name := strings.Join(base, " ")
	if name == "void" {
		t = types.Void{}
	} else if kt != nil {
		var err error
		if t, err = kt.LookupType(name); err != nil || t == nil {
			return nil
		}
	} else {
		return nil
	}
	if q != 0 {
		t = &types.Qualified{Qual: q, Type: t}
	}
	for ; i < len(toks); i++ {
		switch toks[i] {
		case "*":
			t = &types.Pointer{Elem: t}
		case "const":
			t = &types.Qualified{Qual: types.Const, Type: t}
		case "volatile":
			t = &types.Qualified{Qual: types.Volatile, Type: t}
		default:
			return nil
		}
	}
	return t
}
