package probe

import (
	"debug/elf"
	"errors"
	"fmt"
	"sort"
)

// An ObjectProbe is a USDT probe point in a relocatable object, as
// dtrace -G finds the probes of the objects it links: the probe's
// provider and name (with "__" read as "-"), the function it is in, and
// its offset there. Where the point is is only known once the object is
// linked: the note's address field is left to a relocation, which says
// against what symbol.
type ObjectProbe struct {
	Provider, Name string
	Func           string
	Offset         uint64
	Args           string // the note's argument locations
}

// ObjectProbes returns the USDT probe points that the <sys/sdt.h> notes
// of the relocatable object f mark, in the notes' order.
func ObjectProbes(f *elf.File) ([]ObjectProbe, error) {
	sec := f.Section(".note.stapsdt")
	if sec == nil || sec.Type != elf.SHT_NOTE {
		return nil, nil
	}
	notes, err := readSDTNotes(f)
	if err != nil {
		return nil, err
	}
	secIdx := -1
	for i, s := range f.Sections {
		if s == sec {
			secIdx = i
		}
	}
	// The relocations of the notes' address fields.
	relocs := map[uint64]reloc{}
	err = relocations(f, func(r reloc) {
		if r.target == secIdx {
			relocs[r.off] = r
		}
	})
	if err != nil {
		return nil, err
	}
	syms, err := f.Symbols()
	if err != nil && len(relocs) > 0 {
		return nil, err
	}
	sdata, err := sec.Data()
	if err != nil {
		return nil, err
	}
	var probes []ObjectProbe
	for _, n := range notes {
		t, ok := relocs[n.desc]
		if !ok || t.sym < 1 || t.sym > len(syms) {
			return nil, fmt.Errorf("the note of probe %s:%s has no relocation for its address", n.provider, n.name)
		}
		s := syms[t.sym-1] // Symbols leaves out the null symbol
		at := s.Value + uint64(t.addend)
		if t.inPlace && uint64(len(sdata)) >= n.desc+8 {
			at = s.Value + f.ByteOrder.Uint64(sdata[n.desc:])
		}
		fn, off, ok := funcContaining(syms, s.Section, at)
		if !ok {
			return nil, fmt.Errorf("probe %s:%s is in no function", n.provider, n.name)
		}
		probes = append(probes, ObjectProbe{Provider: n.provider, Name: usdtProbeName(n.name), Func: fn, Offset: off, Args: n.args})
	}
	return probes, nil
}

// A reloc is a relocation of a relocatable object: the field at off in
// section target is to hold the address of symbol sym (an index in the
// symbol table) plus addend, which for an SHT_REL relocation (inPlace)
// is the field's own value.
type reloc struct {
	target  int
	off     uint64
	sym     int
	addend  int64
	inPlace bool
}

// relocations calls yield with every relocation of f, a 64-bit object.
func relocations(f *elf.File, yield func(reloc)) error {
	for _, r := range f.Sections {
		if r.Type != elf.SHT_RELA && r.Type != elf.SHT_REL {
			continue
		}
		if f.Class != elf.ELFCLASS64 {
			return fmt.Errorf("%s relocations of a 32-bit object are not supported", r.Name)
		}
		data, err := r.Data()
		if err != nil {
			return err
		}
		entsize := 24
		if r.Type == elf.SHT_REL {
			entsize = 16
		}
		for ; len(data) >= entsize; data = data[entsize:] {
			t := reloc{target: int(r.Info), off: f.ByteOrder.Uint64(data), sym: int(f.ByteOrder.Uint64(data[8:]) >> 32), inPlace: entsize == 16}
			if entsize == 24 {
				t.addend = int64(f.ByteOrder.Uint64(data[16:]))
			}
			yield(t)
		}
	}
	return nil
}

// An ObjectRef is where the code of a relocatable object refers to a
// symbol: the function, and the offset there of the field that the
// symbol's address goes in.
type ObjectRef struct {
	Symbol string
	Func   string
	Offset uint64
}

// ObjectReferences returns the references that the code of the
// relocatable object f makes to the symbols named, in the order of its
// relocations: where the is-enabled tests of a <sys/sdt.h> header read
// their probes' semaphores, for dtrace -G.
func ObjectReferences(f *elf.File, names map[string]bool) ([]ObjectRef, error) {
	syms, err := f.Symbols()
	if err != nil {
		if errors.Is(err, elf.ErrNoSymbols) {
			return nil, nil
		}
		return nil, err
	}
	var refs []ObjectRef
	err = relocations(f, func(r reloc) {
		if r.sym < 1 || r.sym > len(syms) || !names[syms[r.sym-1].Name] || r.target >= len(f.Sections) {
			return
		}
		if f.Sections[r.target].Flags&elf.SHF_EXECINSTR == 0 {
			return
		}
		if fn, off, ok := funcContaining(syms, elf.SectionIndex(r.target), r.off); ok {
			refs = append(refs, ObjectRef{Symbol: syms[r.sym-1].Name, Func: fn, Offset: off})
		}
	})
	return refs, err
}

// funcContaining returns the function symbol of section sec that covers
// offset at, and the offset from its start: the global symbol where an
// alias has several names.
func funcContaining(syms []elf.Symbol, sec elf.SectionIndex, at uint64) (string, uint64, bool) {
	var cands []elf.Symbol
	for _, s := range syms {
		if s.Section == sec && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value <= at && at < s.Value+max(s.Size, 1) {
			cands = append(cands, s)
		}
	}
	if len(cands) == 0 {
		return "", 0, false
	}
	sort.SliceStable(cands, func(i, j int) bool {
		return elf.ST_BIND(cands[i].Info) != elf.STB_LOCAL && elf.ST_BIND(cands[j].Info) == elf.STB_LOCAL
	})
	return cands[0].Name, at - cands[0].Value, true
}
