package attach

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/internal/probe"
)

// maxTrampolineArgs is how many arguments an x86-64 BPF trampoline
// saves (arch_prepare_bpf_trampoline, Linux 6.1): the registers of the
// calling convention.
const maxTrampolineArgs = 6

var trampolines = sync.OnceValue(func() error { return haveTrampolines(kernelTypes) })

// HaveTrampolines returns nil if the kernel runs BPF programs at the
// entry and return of kernel functions through BPF trampolines (fentry
// and fexit) with the helpers that read their arguments and return
// value (bpf_get_func_arg, bpf_get_func_ret: Linux 5.17), else why not.
// The answer is found once. The development machines answer EPERM:
// their kernel refuses every trampoline (linux-tracing.md §3.1).
func HaveTrampolines() error { return trampolines() }

// haveTrampolines is HaveTrampolines, finding the probe's function in
// kernel, the kernel's BTF that TrampolineTarget and the programs'
// loads (KernelTypes) read too.
func haveTrampolines(kernel *btf.Cache) error {
	// An fexit program that reads an argument and the return value, on
	// the function cilium/ebpf probes fentry with: loaded, never
	// attached. (features.HaveProgramType would read the kernel's BTF
	// once more to ask less.)
	spec := &ebpf.ProgramSpec{
		Type:       ebpf.Tracing,
		AttachType: ebpf.AttachTraceFExit,
		AttachTo:   "bpf_init",
		License:    "GPL",
		Instructions: asm.Instructions{
			asm.Mov.Reg(asm.R6, asm.R1),
			asm.Mov.Imm(asm.R2, 0),
			asm.Mov.Reg(asm.R3, asm.R10),
			asm.Add.Imm(asm.R3, -8),
			asm.FnGetFuncArg.Call(),
			asm.Mov.Reg(asm.R1, asm.R6),
			asm.Mov.Reg(asm.R2, asm.R10),
			asm.Add.Imm(asm.R2, -8),
			asm.FnGetFuncRet.Call(),
			asm.Mov.Imm(asm.R0, 0),
			asm.Return(),
		},
	}
	coll, err := ebpf.NewCollectionWithOptions(&ebpf.CollectionSpec{Programs: map[string]*ebpf.ProgramSpec{"fexit": spec}},
		ebpf.CollectionOptions{Cache: kernel})
	var ve *ebpf.VerifierError
	switch {
	case errors.Is(err, unix.EPERM):
		return errors.New("the kernel refuses fentry programs (EPERM)")
	case errors.As(err, &ve):
		return fmt.Errorf("the kernel has no bpf_get_func_arg or bpf_get_func_ret (Linux 5.17): %w", err)
	case err != nil:
		return fmt.Errorf("the kernel loads no fentry program: %w", err)
	}
	coll.Close()
	return nil
}

// TrampolineTarget returns nil if an fentry or fexit program can go on
// the function of site s, as far as the kernel's BTF tells: the
// function has a BTF description of its own (one function of that
// name), at most six arguments, and neither takes nor returns a
// structure by value. Else it says why not. The kernel may still
// refuse the function when the program is loaded or attached (a
// function ftrace does not trace, init code). A kinst offset never
// goes on a trampoline.
func TrampolineTarget(s *probe.KernelSite) error {
	spec, err := kernelBTF(s.Module)
	if err != nil {
		return err
	}
	return trampolineTarget(spec, s)
}

// trampolineTarget is TrampolineTarget in the given BTF.
func trampolineTarget(spec *btf.Spec, s *probe.KernelSite) error {
	if s.Offset != 0 {
		return errors.New("a trampoline goes on a function's entry or return, not at an offset")
	}
	ts, err := spec.AnyTypesByName(s.Function)
	if err != nil && !errors.Is(err, btf.ErrNotFound) {
		return err
	}
	var fns []*btf.Func
	for _, t := range ts {
		if fn, ok := t.(*btf.Func); ok {
			fns = append(fns, fn)
		}
	}
	switch {
	case len(fns) == 0:
		return fmt.Errorf("the kernel's BTF does not describe function %s", s.Function)
	case len(fns) > 1:
		return fmt.Errorf("the kernel's BTF describes %d functions named %s", len(fns), s.Function)
	}
	proto, ok := fns[0].Type.(*btf.FuncProto)
	if !ok {
		return fmt.Errorf("the kernel's BTF gives function %s no prototype", s.Function)
	}
	if n := len(proto.Params); n > maxTrampolineArgs {
		return fmt.Errorf("function %s has %d arguments, over the %d a trampoline saves", s.Function, n, maxTrampolineArgs)
	}
	for i, p := range proto.Params {
		if byValue(p.Type) {
			return fmt.Errorf("argument %d of function %s is a structure passed by value", i, s.Function)
		}
	}
	if byValue(proto.Return) {
		return fmt.Errorf("function %s returns a structure by value", s.Function)
	}
	return nil
}

// byValue reports whether a value of type t is a structure or union,
// which a trampoline does not carry.
func byValue(t btf.Type) bool {
	switch btf.UnderlyingType(t).(type) {
	case *btf.Struct, *btf.Union:
		return true
	}
	return false
}

// kernelTypes keeps the kernel's BTF, and its modules', once read: one
// enabling checks many functions, and loads their programs.
var kernelTypes = btf.NewCache()

// KernelTypes returns the kernel's BTF as HaveTrampolines and
// TrampolineTarget read it, for loading the programs of trampolines
// (bpf.Runtime.LoadTrampolines) without reading it again.
func KernelTypes() *btf.Cache { return kernelTypes }

// kernelBTF returns the BTF of the kernel, or of one of its modules.
func kernelBTF(module string) (*btf.Spec, error) {
	if module == "" || module == probe.KernelModule {
		return kernelTypes.Kernel()
	}
	return kernelTypes.Module(module)
}

// Trampoline attaches prog, an fentry program (an fexit program for a
// return site), loaded for the function of site s.
func Trampoline(prog *ebpf.Program, s *probe.KernelSite) (*attachment, error) {
	at := ebpf.AttachTraceFEntry
	if s.Return {
		at = ebpf.AttachTraceFExit
	}
	l, err := link.AttachTracing(link.TracingOptions{Program: prog, AttachType: at})
	if err != nil {
		return nil, &siteError{Index: 0, Site: kernelSiteName(s), Err: err}
	}
	a := &attachment{}
	a.add(l)
	return a, nil
}
