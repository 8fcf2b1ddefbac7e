package probe

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
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
// them. The calls are those of the kernel's syscall tracepoints
// (tracefs events/syscalls) when tracefs is mounted, else those whose
// handlers (__x64_sys_name) the kernel's function list holds. Entry
// arguments are typed from the tracepoint's format or, without tracefs,
// from the prototype of __do_sys_name where BTF has one; both return
// arguments are the return value, a long.
type syscallProvider struct {
	k *kernel
	// eventDirs are the places tracefs's events/syscalls may be, in
	// order of preference; none for an offline kernel.
	eventDirs []string
	// isCall is Config.Syscall.
	isCall func(name string) bool

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
func (*syscallProvider) Attributes() Attributes { return kernelAttr }

// calls returns the system calls' names, sorted.
func (s *syscallProvider) calls() ([]string, error) {
	s.once.Do(func() {
		for _, dir := range s.eventDirs {
			if names, err := tracefsSyscalls(dir); err == nil && len(names) > 0 {
				s.events, s.names = dir, names
				return
			}
		}
		s.names, s.err = s.handlerSyscalls()
	})
	return s.names, s.err
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
	l, err := s.k.module(KernelModule)
	if err != nil || l == nil {
		return nil, err
	}
	var names []string
	for i := range l.len() {
		if name, ok := strings.CutPrefix(l.name(i), s.k.syscallPrefix); ok && name != "ni_syscall" && (s.isCall == nil || s.isCall(name)) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

func (s *syscallProvider) Probes(q *Query, yield func(*Probe) bool) error {
	entry, ret := q.Name.Match("entry"), q.Name.Match("return")
	if !entry && !ret || !q.Module.Match(KernelModule) {
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
	if s.events != "" {
		file := filepath.Join(s.events, "sys_enter_"+name, "format")
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		decls, err := formatFields(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
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

// formatFields returns the declarations of the fields of a tracepoint
// format file that follow the common ones and __syscall_nr: the
// arguments of a syscall tracepoint, as "const char * filename".
func formatFields(data []byte) ([]string, error) {
	var decls []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		decl, ok := strings.CutPrefix(line, "field:")
		if !ok {
			continue
		}
		decl, _, ok = strings.Cut(decl, ";")
		if !ok {
			return nil, fmt.Errorf("field line without ';': %q", line)
		}
		name := decl[strings.LastIndexAny(decl, " *")+1:]
		if strings.HasPrefix(name, "common_") || name == "__syscall_nr" {
			continue
		}
		decls = append(decls, decl)
	}
	return decls, sc.Err()
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
