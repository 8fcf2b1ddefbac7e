package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"sync"

	"github.com/kdtrace/kdtrace/btf"
	"github.com/kdtrace/kdtrace/debuginfo"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/ksym"
)

// kernelTypes returns the kernel's types for the checker: the BTF file
// --btf names ("none" for no kernel types); for a --kernel image, its
// .BTF section, else its DWARF; for the running kernel, its BTF on
// Linux and its DWARF on FreeBSD. Files are opened here but read only
// when a script names a type. A kernel without types is not an error:
// scripts that name none still compile, and those that do are told
// which type is missing.
func (c *config) kernelTypes(warn io.Writer) []types.Module {
	switch {
	case c.btf == "none":
		return nil
	case c.btf != "":
		m, err := btf.Open(c.btf, nil)
		if err != nil {
			fmt.Fprintf(warn, "%s: warning: no kernel types: %v\n", c.progName, err)
			return nil
		}
		return []types.Module{m}
	case c.kinst.kernel != "":
		if m, err := btf.Open(c.kinst.kernel, nil); err == nil {
			return []types.Module{m}
		}
		img, err := debuginfo.OpenImage(c.kinst.kernel, debuginfo.Options{DebugRoot: c.kinst.debugRoot})
		if err == nil {
			return c.dwarfTypes(img, warn)
		}
		fmt.Fprintf(warn, "%s: warning: no kernel types in %s: %v\n", c.progName, c.kinst.kernel, err)
		return nil
	case runtime.GOOS == "freebsd":
		set, err := debuginfo.Kernel(debuginfo.Options{DebugRoot: c.kinst.debugRoot})
		if err != nil || len(set.Images()) == 0 {
			return nil
		}
		return c.dwarfTypes(set.Images()[0], warn)
	}
	m, err := btf.Kernel()
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a kernel built without BTF
	}
	if err != nil {
		fmt.Fprintf(warn, "%s: warning: no kernel types: %v\n", c.progName, err)
		return nil
	}
	return []types.Module{m}
}

// dwarfTypes returns an image's DWARF types, named as the target's
// kernel module is named in D: vmlinux on Linux, kernel on FreeBSD.
func (c *config) dwarfTypes(img *debuginfo.Image, warn io.Writer) []types.Module {
	t, err := img.Types()
	if err != nil {
		fmt.Fprintf(warn, "%s: warning: no kernel types: %v\n", c.progName, err)
		return nil
	}
	if runtime.GOOS == "freebsd" {
		return []types.Module{t}
	}
	return []types.Module{linuxKernel{t}}
}

// linuxKernel names a kernel's DWARF types vmlinux, as BTF names them.
type linuxKernel struct{ *debuginfo.Types }

func (linuxKernel) ModuleName() string { return btf.KernelModule }

// loadModule opens the BTF of a running kernel's module the first time
// a script scopes a type name by it.
func (c *config) loadModule(name string) (types.Module, error) {
	for _, m := range c.modules {
		if k, ok := m.(*btf.Module); ok && m.ModuleName() == btf.KernelModule && c.btf == "" && c.kinst.kernel == "" {
			mb, err := btf.LoadModule(k, name)
			if err != nil {
				return nil, err
			}
			return mb, nil
		}
	}
	return nil, nil
}

// symbols resolves the kernel's symbols (`sym): the --kernel image's
// symbol table, or the running kernel's kallsyms, read when a program
// first names one; typed by the kernel's types, and for a --kernel
// image whose types are BTF, which seldom lists more than the per-CPU
// variables, then by its DWARF.
func (c *config) symbols() *ksym.Resolver {
	load := func() (*ksym.Table, error) { return ksym.Kallsyms("/proc/kallsyms", "/proc/kcore") }
	if c.kinst.kernel != "" {
		load = func() (*ksym.Table, error) { return ksym.ReadELF(c.kinst.kernel) }
	}
	dwarf := sync.OnceValue(func() ksym.VarTypes {
		if t, err := debuginfo.OpenTypes(c.kinst.kernel, btf.KernelModule); err == nil {
			return t
		}
		return nil
	})
	return &ksym.Resolver{Load: load, Types: func(mod string) ([]ksym.VarTypes, error) {
		var srcs []ksym.VarTypes
		for _, m := range c.modules {
			if v, ok := m.(ksym.VarTypes); ok && m.ModuleName() == mod {
				srcs = append(srcs, v)
				if _, ok := m.(*btf.Module); ok && mod == btf.KernelModule && c.kinst.kernel != "" && c.btf == "" && dwarf() != nil {
					srcs = append(srcs, dwarf())
				}
			}
		}
		if len(srcs) == 0 && mod != btf.KernelModule {
			if m, err := c.loadModule(mod); err == nil {
				if v, ok := m.(ksym.VarTypes); ok {
					srcs = append(srcs, v)
				}
			}
		}
		return srcs, nil
	}}
}
