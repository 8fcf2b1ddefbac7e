package ksym

import (
	"errors"
	"sync"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// VarTypes gives the types of a module's variables: *btf.Module and
// *dwarftypes.Types implement it.
type VarTypes interface {
	// LookupVar returns the type of the variable called name, or nil.
	LookupVar(name string) (types.Type, error)
}

// varSections is implemented by type sources that know the data
// section of a variable (BTF's DATASEC): .data..percpu marks the
// per-CPU ones.
type varSections interface {
	VarSection(name string) (string, uint32, error)
}

// perCPUSection is the section of the kernel's per-CPU variables.
const perCPUSection = ".data..percpu"

// Resolver implements the D checker's Symbols over a kernel's symbol
// table and types. The table is read when the first symbol is looked
// up.
type Resolver struct {
	// Load reads the symbol table; it is called once.
	Load func() (*Table, error)
	// Types returns the sources of the variable types of module
	// (KernelModule for the kernel), searched in order; none when the
	// module has no types.
	Types func(module string) ([]VarTypes, error)

	once sync.Once
	tab  *Table
	err  error
}

var _ check.Symbols = (*Resolver)(nil)

// Table returns the symbol table, reading it on first use.
func (r *Resolver) Table() (*Table, error) {
	r.once.Do(func() {
		if r.Load == nil {
			r.err = errors.New("no symbol table")
			return
		}
		r.tab, r.err = r.Load()
	})
	return r.tab, r.err
}

// Symbol looks up name in module mod, or in the kernel and then its
// modules when mod is "". A symbol the table lacks is still found when
// the module's types have a variable of that name (BTF lists the
// per-CPU variables, and with newer tools every global, though a
// kernel without CONFIG_KALLSYMS_ALL lists only functions in kallsyms):
// it then has a type and no address.
func (r *Resolver) Symbol(mod, name string) (*check.KernelSymbol, error) {
	tab, terr := r.Table()
	if terr == nil {
		syms, err := tab.Lookup(mod, name)
		if err == nil {
			s := syms[0]
			ks := &check.KernelSymbol{Name: s.Name, Module: s.Module, Addr: s.Addr, HasAddr: !tab.zero,
				Func: s.Func, Primary: s.Module == KernelModule, PerCPU: s.PerCPU || tab.inPerCPU(s)}
			if tab.zero {
				ks.NoAddr = "the kernel hides its symbols' addresses from this user (kptr_restrict)"
			}
			if !s.Func {
				if err := r.typeVar(ks); err != nil {
					return nil, err
				}
			}
			return ks, nil
		}
		if errors.Is(err, errUnknownModule) && !r.hasTypes(mod) {
			return nil, err
		}
	}
	// Not in the table: a variable the types know.
	if mod == "" {
		mod = KernelModule
	}
	ks := &check.KernelSymbol{Name: name, Module: mod, Primary: mod == KernelModule}
	if err := r.typeVar(ks); err != nil {
		return nil, err
	}
	switch {
	case ks.Type != nil && terr != nil:
		ks.NoAddr = "the symbol table cannot be read: " + terr.Error()
		return ks, nil
	case ks.Type != nil:
		ks.NoAddr = tab.source + " does not list it" + tab.hint
		return ks, nil
	case terr != nil:
		return nil, terr
	}
	return nil, ErrUnknownSymbol
}

// typeVar gives ks the type of its variable, and marks it per-CPU when
// its section is.
func (r *Resolver) typeVar(ks *check.KernelSymbol) error {
	if r.Types == nil {
		return nil
	}
	srcs, err := r.Types(ks.Module)
	if err != nil {
		return err
	}
	for _, src := range srcs {
		t, err := src.LookupVar(ks.Name)
		if err != nil {
			return err
		}
		if t == nil {
			continue
		}
		ks.Type = t
		if vs, ok := src.(varSections); ok {
			sec, _, err := vs.VarSection(ks.Name)
			if err != nil {
				return err
			}
			ks.PerCPU = ks.PerCPU || sec == perCPUSection
		}
		return nil
	}
	return nil
}

// hasTypes reports whether module mod has types, though the table has
// no symbols of it.
func (r *Resolver) hasTypes(mod string) bool {
	if r.Types == nil {
		return false
	}
	srcs, err := r.Types(mod)
	return err == nil && len(srcs) > 0
}
