package probe

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/dof"
)

// USDT: the statically defined probes of user programs. On Linux a
// program marks them with <sys/sdt.h>'s macros (DTRACE_PROBEn, or a
// header made by dtrace -h), which leave one ELF note per probe point
// in its .note.stapsdt section: the point's address, the address of
// its is-enabled semaphore, the provider, the probe and how to find
// each argument. dtrace names such a probe provider<PID>:module:
// function:name, with "__" in the probe's name read as "-", and makes a
// process's USDT providers when a description names a provider ending
// in its process ID. An object linked with what dtrace -G wrote also
// carries its providers' declarations as DOF: a probe whose arguments
// the provider translates, p(int i, int j) : (int j, int i), takes them
// in that order and of those types.

// A USDTSite is where a USDT probe is in a process: every point in one
// function of one object that the program marked with the probe's
// provider and name.
type USDTSite struct {
	PID    int
	Path   string // the object's file, as the process maps it
	Points []USDTPoint
	// ArgTypes are the C types of the arguments, as the provider
	// declares them in the DOF that dtrace -G linked into the object;
	// nil where it has none.
	ArgTypes []string
	// AnyProcess, set by whoever attaches the site, has its points
	// fire in every process that maps Path, not in PID's alone: for a
	// description such as test_prov*:::, which matches the provider of
	// every process, those of the processes PID forks and of those
	// that run the same file later included.
	AnyProcess bool
}

// A USDTPoint is one marked instruction of a USDT probe.
type USDTPoint struct {
	// Addr is the point's address and Semaphore that of its
	// is-enabled counter (0 if it has none), as the object's file
	// links them.
	Addr, Semaphore uint64
	// Args are the arguments' locations, as the note gives them:
	// "-4@%edi 8@-16(%rbp)", size (negative when signed) @ operand.
	Args string
}

// An sdtNote is one note of a .note.stapsdt section.
type sdtNote struct {
	provider, name, args string
	pc, semaphore        uint64
	desc                 uint64 // the offset of its descriptor in the section
}

// The note's owner and type, as <sys/sdt.h> writes them.
const (
	sdtNoteName = "stapsdt"
	sdtNoteType = 3
)

var errSDTNote = errors.New("malformed .note.stapsdt entry")

// readSDTNotes returns the USDT notes of f, their addresses adjusted as
// <sys/sdt.h> asks when the object was prelinked: by the difference
// between the .stapsdt.base section's address and the base each note
// recorded. An object without the section has none. Notes after a
// malformed one are not read: the error says so.
func readSDTNotes(f *elf.File) ([]sdtNote, error) {
	sec := f.Section(".note.stapsdt")
	if sec == nil || sec.Type != elf.SHT_NOTE {
		return nil, nil
	}
	data, err := sec.Data()
	if err != nil {
		return nil, err
	}
	var base uint64
	hasBase := false
	if b := f.Section(".stapsdt.base"); b != nil {
		base, hasBase = b.Addr, true
	}
	addrSize := 8
	if f.Class == elf.ELFCLASS32 {
		addrSize = 4
	}
	return parseSDTNotes(data, f.ByteOrder, addrSize, base, hasBase)
}

// parseSDTNotes reads the notes of a .note.stapsdt section's data.
func parseSDTNotes(data []byte, bo binary.ByteOrder, addrSize int, base uint64, hasBase bool) ([]sdtNote, error) {
	var notes []sdtNote
	size := uint64(len(data))
	for len(data) > 0 {
		if len(data) < 12 {
			return notes, errSDTNote
		}
		namesz, descsz, typ := uint64(bo.Uint32(data)), uint64(bo.Uint32(data[4:])), bo.Uint32(data[8:])
		data = data[12:]
		nameEnd, descEnd := align4(namesz), align4(namesz)+align4(descsz)
		if namesz > uint64(len(data)) || descsz > uint64(len(data)) || descEnd > uint64(len(data)) {
			return notes, errSDTNote
		}
		name, desc := data[:namesz], data[nameEnd:nameEnd+descsz]
		descOff := size - uint64(len(data)) + nameEnd
		data = data[descEnd:]
		if typ != sdtNoteType || string(bytes.TrimRight(name, "\x00")) != sdtNoteName {
			continue
		}
		if len(desc) < 3*addrSize {
			return notes, errSDTNote
		}
		addr := func(i int) uint64 {
			if addrSize == 4 {
				return uint64(bo.Uint32(desc[4*i:]))
			}
			return bo.Uint64(desc[8*i:])
		}
		n := sdtNote{pc: addr(0), semaphore: addr(2), desc: descOff}
		if hasBase {
			// Prelinking moved the object by base - addr(1).
			n.pc += base - addr(1)
			if n.semaphore != 0 {
				n.semaphore += base - addr(1)
			}
		}
		strs := strings.SplitN(string(desc[3*addrSize:]), "\x00", 4)
		if len(strs) < 3 || strs[0] == "" || strs[1] == "" {
			return notes, errSDTNote
		}
		n.provider, n.name, n.args = strs[0], strs[1], strs[2]
		notes = append(notes, n)
	}
	return notes, nil
}

func align4(n uint64) uint64 { return (n + 3) &^ 3 }

// usdtProbeName returns the D name of a probe that a program named name
// in C, where "-" cannot be written.
func usdtProbeName(name string) string { return strings.ReplaceAll(name, "__", "-") }

// usdtProvider is one USDT provider of one process. Its probes change
// when the process maps or unmaps an object (Catalog.Refresh).
type usdtProvider struct {
	name string
	pid  int

	mu     sync.Mutex
	probes []*Probe
}

func (p *usdtProvider) Name() string           { return p.name }
func (p *usdtProvider) Attributes() attributes { return usdtAttr }

func (p *usdtProvider) Probes(q *query, yield func(*Probe) bool) error {
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

// probeArgs types a USDT probe's arguments by the sizes its notes give
// them: "-4@%edi" is an int32_t, "8@%rax" a uint64_t, an argument
// without a size an int64_t. An argument whose points disagree is an
// int64_t; a probe whose points pass different numbers of arguments has
// no typed arguments.
func (p *usdtProvider) probeArgs(pr *Probe) ([]types.Type, error) {
	site, ok := pr.Detail.(*USDTSite)
	if !ok || len(site.Points) == 0 {
		return nil, nil
	}
	if args, ok := declaredArgs(site.ArgTypes); ok {
		return args, nil
	}
	var sizes []string
	for i, pt := range site.Points {
		specs := strings.Fields(pt.Args)
		if i > 0 && len(specs) != len(sizes) {
			return nil, nil
		}
		for j, spec := range specs {
			size, _, ok := strings.Cut(spec, "@")
			if !ok {
				size = ""
			}
			switch {
			case i == 0:
				sizes = append(sizes, size)
			case sizes[j] != size:
				sizes[j] = ""
			}
		}
	}
	args := make([]types.Type, len(sizes))
	for i, size := range sizes {
		args[i] = usdtArgType(size)
	}
	return args, nil
}

// declaredArgs returns the D types of the argument types a provider
// declares, if D's own types name every one.
func declaredArgs(names []string) ([]types.Type, bool) {
	if names == nil {
		return nil, false
	}
	args := make([]types.Type, len(names))
	for i, n := range names {
		t, err := dTypes().LookupType(n)
		if err != nil || t == nil {
			return nil, false
		}
		args[i] = t
	}
	return args, true
}

// usdtArgType returns the D type of an argument of the given size, as
// a note writes it.
func usdtArgType(size string) types.Type {
	name, ok := map[string]string{
		"-1": "int8_t", "1": "uint8_t", "-2": "int16_t", "2": "uint16_t",
		"-4": "int32_t", "4": "uint32_t", "-8": "int64_t", "8": "uint64_t",
	}[size]
	if !ok {
		name = "int64_t"
	}
	t, _ := dTypes().LookupType(name)
	return t
}

// dTypes is D's own container, for the typedefs of USDT arguments.
var dTypes = sync.OnceValue(func() *types.Scope {
	_, d := types.Builtin(defaultStrSize)
	return d
})

// usdtProviders returns the USDT providers of process proc: one for
// each provider its objects' notes name, called by that name and the
// process ID, sorted by name; their probes are sorted by module,
// function and name. An object whose notes cannot be read adds none.
func usdtProviders(proc *process) []*usdtProvider {
	pid := strconv.Itoa(proc.pid)
	byName := map[string]*usdtProvider{}
	for _, o := range proc.objects {
		notes, syms := o.usdtNotes()
		sites := map[Desc]*USDTSite{}
		for _, n := range notes {
			prov := n.provider + pid
			p := byName[prov]
			if p == nil {
				p = &usdtProvider{name: prov, pid: proc.pid}
				byName[prov] = p
			}
			d := Desc{prov, o.name, syms.funcAt(n.pc), usdtProbeName(n.name)}
			site := sites[d]
			if site == nil {
				site = &USDTSite{PID: proc.pid, Path: o.path}
				sites[d] = site
				p.probes = append(p.probes, &Probe{Provider: d.Provider, Module: d.Module, Function: d.Function, Name: d.Name, Detail: site, args: p})
			}
			args := n.args
			if da, ok := o.dofArgs[provProbe{n.provider, d.Name}]; ok {
				if mapped, ok := da.mapArgs(args); ok {
					args = mapped
					site.ArgTypes = da.xargs
				}
			}
			site.Points = append(site.Points, USDTPoint{Addr: n.pc, Semaphore: n.semaphore, Args: args})
		}
	}
	provs := make([]*usdtProvider, 0, len(byName))
	for _, p := range byName {
		sort.Slice(p.probes, func(i, j int) bool {
			a, b := p.probes[i], p.probes[j]
			if a.Module != b.Module {
				return a.Module < b.Module
			}
			if a.Function != b.Function {
				return a.Function < b.Function
			}
			return a.Name < b.Name
		})
		provs = append(provs, p)
	}
	sort.Slice(provs, func(i, j int) bool { return provs[i].name < provs[j].name })
	return provs
}

// usdtNotes returns the object's USDT notes and symbols, read once.
func (o *procObject) usdtNotes() ([]sdtNote, *objSyms) {
	o.usdtOnce.Do(func() {
		f, err := elf.Open(o.file)
		if err != nil {
			return
		}
		defer f.Close()
		o.notes, _ = readSDTNotes(f)
		if len(o.notes) > 0 {
			o.dofArgs = readDOFArgs(f)
		}
	})
	if len(o.notes) == 0 {
		return nil, nil
	}
	syms, _ := o.symbols()
	return o.notes, syms
}

// funcAt returns the name of the function at addr, or "-" where no
// symbol covers it, as the pid provider names absolute addresses.
func (s *objSyms) funcAt(addr uint64) string {
	if s == nil {
		return "-"
	}
	for _, tab := range [][]objSym{s.symtab, s.dynsym} {
		i := sort.Search(len(tab), func(i int) bool { return tab[i].value > addr }) - 1
		for j := i; j >= 0 && tab[j].value == tab[i].value; j-- {
			if addr-tab[j].value < max(tab[j].size, 1) {
				return tab[j].name
			}
		}
	}
	return "-"
}

// A provProbe names a probe of a provider, as a USDT note and the DOF
// of dtrace -G name it (the probe's name with "-", not "__").
type provProbe struct{ provider, name string }

// dofArgs are a probe's arguments, as its provider declares them: the
// native (C) types, the translated types and, for each translated
// argument, the native one it is.
type dofArgs struct {
	nargs, xargs []string
	argmap       []uint8
}

// mapArgs returns the argument locations of a note, "-4@$10 -4@$4",
// ordered as the probe's translated arguments take them: for
// probe p(int i, int j) : (int j, int i, int i, int j), "-4@$4 -4@$10
// -4@$10 -4@$4". A note whose arguments are not the native ones the
// provider declares is left as it is.
func (a dofArgs) mapArgs(spec string) (string, bool) {
	native := strings.Fields(spec)
	if len(native) != len(a.nargs) || len(a.argmap) != len(a.xargs) {
		return "", false
	}
	mapped := make([]string, len(a.argmap))
	for i, j := range a.argmap {
		if int(j) >= len(native) {
			return "", false
		}
		mapped[i] = native[j]
	}
	return strings.Join(mapped, " "), true
}

// readDOFArgs reads the providers' declarations from the DOF that
// dtrace -G linked into f: its .SUNW_dof section holds one DOF object
// for each -G object the program was linked with, one after the other
// at 8-byte boundaries. DOF that cannot be read is passed over.
func readDOFArgs(f *elf.File) map[provProbe]dofArgs {
	sec := f.Section(".SUNW_dof")
	if sec == nil || sec.Type != elf.SHT_PROGBITS {
		return nil
	}
	b, err := sec.Data()
	if err != nil {
		return nil
	}
	m := map[provProbe]dofArgs{}
	for len(b) >= dof.HeaderSize {
		h := dof.DecodeHeader(b)
		if h.FileSz < dof.HeaderSize || h.FileSz > uint64(len(b)) {
			break
		}
		if df, err := dof.Read(b[:h.FileSz], nil); err == nil {
			if p, err := df.Program(); err == nil {
				for _, pv := range p.Providers {
					for _, pr := range pv.Probes {
						m[provProbe{pv.Name, pr.Name}] = dofArgs{pr.NArgs, pr.XArgs, pr.ArgMap}
					}
				}
			}
		}
		b = b[min(uint64(len(b)), (h.FileSz+7)&^7):]
	}
	return m
}
