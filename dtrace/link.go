package dtrace

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"syscall"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dlang/header"
	"github.com/kdtrace/kdtrace/internal/elfobj"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// LinkName returns the file dtrace -G writes a program to, as dtrace's
// link_prog names it: output (-o) when it is the only program, else a
// script's base name with .o for .d, else d.out, numbered by the
// program's index i among n when there are several.
func LinkName(p *Program, i, n int, output string) string {
	switch {
	case n == 1 && output != "":
		return output
	case p.Spec == Script && len(p.Source) > 2 && p.Source[len(p.Source)-2:] == ".d":
		base := p.Source[:len(p.Source)-2]
		for j := len(base) - 1; j >= 0; j-- {
			if base[j] == '/' {
				base = base[j+1:]
				break
			}
		}
		return base + ".o"
	case n > 1:
		return fmt.Sprintf("d.out.%d", i)
	}
	return "d.out"
}

// Link returns what dtrace -G writes for the programs and the objects
// named: the programs' ECBs and the providers they define, with the
// probe points that the objects' <sys/sdt.h> notes mark and the
// is-enabled sites where their code reads the probes' semaphores (the
// offset of the field the semaphore's address goes in), as DOF. By
// default (-x linktype=elf) the DOF is wrapped in an ELF relocatable
// object for the host, in a .SUNW_dof section, with the is-enabled
// semaphores of every probe the programs define, weak, so that the
// object links with the objects whether or not their header defined
// them; -x linktype=dof returns the DOF alone.
//
// The programs must be compiled with Link. As dtrace's, a provider
// with no probe in the objects, a note naming a provider the programs
// do not define, or a probe the provider does not declare, is an
// error. The objects are only read: dtrace rewrites the calls of its
// stubs in them, which the notes of <sys/sdt.h> do not need.
func (h *Handle) Link(objects []string, progs ...*Program) ([]byte, error) {
	all := &ast.Program{}
	var ecbs []dof.ECB
	for _, p := range progs {
		all.Decls = append(all.Decls, p.providers...)
		if p.object != nil {
			ecbs = append(ecbs, p.object.ECBs...)
		}
	}
	provs, err := header.Providers(all)
	if err != nil {
		return nil, err
	}
	prog := &dof.Program{ECBs: ecbs}
	type key struct{ prov, name, fn string }
	type at struct{ prov, probe int }
	sites := map[key]at{}
	provIdx := map[string]int{}
	// site returns the DOF probe of pr in function fn, made if new.
	site := func(pv *header.Provider, pr *header.Probe, fn string) *dof.Probe {
		k := key{pv.Name, pr.Name, fn}
		st, ok := sites[k]
		if !ok {
			i, ok := provIdx[pv.Name]
			if !ok {
				i = len(prog.Providers)
				provIdx[pv.Name] = i
				prog.Providers = append(prog.Providers, dof.Provider{Name: pv.Name})
			}
			// The probe's address is that of its function, which
			// the DOF's relocation names.
			dp := &prog.Providers[i]
			dp.Probes = append(dp.Probes, dof.Probe{Func: fn, Name: pr.Name, NArgs: pr.Args, XArgs: pr.XArgs, ArgMap: pr.ArgMap})
			st = at{i, len(dp.Probes) - 1}
			sites[k] = st
		}
		return &prog.Providers[st.prov].Probes[st.probe]
	}
	// The is-enabled tests of a notes header read the probes'
	// semaphores: where they do are the probes' is-enabled sites.
	type provProbe struct {
		pv *header.Provider
		pr *header.Probe
	}
	sems := map[string]provProbe{}
	semNames := map[string]bool{}
	for i := range provs {
		for j := range provs[i].Probes {
			n := header.SemaphoreName(provs[i].Name, provs[i].Probes[j].Name)
			sems[n] = provProbe{&provs[i], &provs[i].Probes[j]}
			semNames[n] = true
		}
	}
	for _, o := range objects {
		ops, refs, err := objectProbes(o, semNames)
		if err != nil {
			return nil, err
		}
		for _, op := range ops {
			pv := lookupProvider(provs, op.Provider)
			if pv == nil {
				return nil, fmt.Errorf("no such provider %s", op.Provider)
			}
			pr := lookupProbe(pv, op.Name)
			if pr == nil {
				return nil, fmt.Errorf("no such probe %s", op.Name)
			}
			if op.Offset > 1<<32-1 {
				return nil, fmt.Errorf("probe %s:%s is too far into %s", op.Provider, op.Name, op.Func)
			}
			dp := site(pv, pr, op.Func)
			dp.Offs = append(dp.Offs, uint32(op.Offset))
		}
		for _, r := range refs {
			if r.Offset > 1<<32-1 {
				return nil, fmt.Errorf("%s is read too far into %s", r.Symbol, r.Func)
			}
			pp := sems[r.Symbol]
			dp := site(pp.pv, pp.pr, r.Func)
			dp.EnOffs = append(dp.EnOffs, uint32(r.Offset))
		}
	}
	// As dof_add_provider, every provider the programs define must
	// have a probe in the objects.
	for _, pv := range provs {
		if _, ok := provIdx[pv.Name]; !ok {
			return nil, errors.New("No probe sites found for declared provider")
		}
	}
	b, err := dof.Write(prog, nil)
	if err != nil {
		return nil, err
	}
	switch v, _ := h.opts.Value("linktype"); v {
	case "dof":
		return b, nil
	case "", "elf":
	default:
		return nil, fmt.Errorf("invalid link type %s", v)
	}
	return linkObject(b, provs)
}

func lookupProvider(provs []header.Provider, name string) *header.Provider {
	for i := range provs {
		if provs[i].Name == name {
			return &provs[i]
		}
	}
	return nil
}

func lookupProbe(pv *header.Provider, name string) *header.Probe {
	for i := range pv.Probes {
		if pv.Probes[i].Name == name {
			return &pv.Probes[i]
		}
	}
	return nil
}

// hostMachine is the ELF machine -G links for.
func hostMachine() (elf.Machine, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return elf.EM_X86_64, true
	case "arm64":
		return elf.EM_AARCH64, true
	}
	return 0, false
}

// objectProbes reads the probe points of an object -G links, and where
// its code reads the semaphores named, checking it as dtrace's
// process_obj does.
func objectProbes(name string, sems map[string]bool) ([]probe.ObjectProbe, []probe.ObjectRef, error) {
	fd, err := os.Open(name)
	if err != nil {
		var errno syscall.Errno
		if errors.As(err, &errno) {
			err = errno
		}
		return nil, nil, fmt.Errorf("failed to open %s: %s", name, strerror(err))
	}
	defer fd.Close()
	var magic [8]byte
	if _, err := io.ReadFull(fd, magic[:]); err == nil && string(magic[:]) == "!<arch>\n" {
		return nil, nil, fmt.Errorf("archives are not permitted; use the contents of the archive instead: %s", name)
	}
	f, err := elf.NewFile(fd)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) && bytes.HasPrefix(magic[:], []byte(elf.ELFMAG)) {
			return nil, nil, fmt.Errorf("corrupt file: %s", name)
		}
		return nil, nil, fmt.Errorf("invalid file type: %s", name)
	}
	m, ok := hostMachine()
	switch {
	case f.Class != elf.ELFCLASS64:
		return nil, nil, fmt.Errorf("incorrect ELF class for object file: %s", name)
	case !ok || f.Machine != m:
		return nil, nil, fmt.Errorf("incorrect ELF machine type for object file: %s", name)
	}
	// An object compiled with a header of dtrace's stubs calls
	// functions that only dtrace's rewriting of the object defines.
	syms, _ := f.Symbols()
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF && strings.HasPrefix(s.Name, "__dtrace") {
			return nil, nil, fmt.Errorf("%s calls %s: probes marked by dtrace's stubs are not linked here; make the header with -x headerstyle=notes", name, s.Name)
		}
	}
	ops, err := probe.ObjectProbes(f)
	if err != nil {
		return nil, nil, fmt.Errorf("an error was encountered while processing %s: %v", name, err)
	}
	refs, err := probe.ObjectReferences(f, sems)
	if err != nil {
		return nil, nil, fmt.Errorf("an error was encountered while processing %s: %v", name, err)
	}
	return ops, refs, nil
}

// linkObject wraps DOF in the object -G writes.
func linkObject(dofBytes []byte, provs []header.Provider) ([]byte, error) {
	m, ok := hostMachine()
	if !ok {
		return nil, fmt.Errorf("-G writes no objects for %s", runtime.GOARCH)
	}
	dofSec := &elfobj.Section{Name: ".SUNW_dof", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC, Align: 8, Data: dofBytes}
	sems := &elfobj.Section{Name: ".probes", Type: elf.SHT_PROGBITS, Flags: elf.SHF_ALLOC | elf.SHF_WRITE, Align: 2}
	o := &elfobj.Object{
		Machine:   m,
		ByteOrder: binary.LittleEndian,
		Sections:  []*elfobj.Section{dofSec},
		// dtrace reduces __SUNW_dof to a local, so that objects of
		// several providers link together.
		Symbols: []elfobj.Symbol{{Name: "__SUNW_dof", Section: dofSec, Size: uint64(len(dofBytes)), Bind: elf.STB_LOCAL, Type: elf.STT_OBJECT}},
	}
	for _, pv := range provs {
		for _, pr := range pv.Probes {
			o.Symbols = append(o.Symbols, elfobj.Symbol{
				Name: header.SemaphoreName(pv.Name, pr.Name), Section: sems,
				Value: uint64(len(sems.Data)), Size: 2, Bind: elf.STB_WEAK, Type: elf.STT_OBJECT,
			})
			sems.Data = append(sems.Data, 0, 0)
		}
	}
	if len(sems.Data) > 0 {
		o.Sections = append(o.Sections, sems)
	}
	// The stack need not be executable.
	o.Sections = append(o.Sections, &elfobj.Section{Name: ".note.GNU-stack", Type: elf.SHT_PROGBITS, Align: 1})
	return o.Bytes()
}
