package bpf

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf/asm"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/btf"
)

// argsOffsets are the byte offsets execargs reads: task_struct's mm,
// and mm_struct's arg_start and arg_end, where exec put the arguments
// in the process's memory.
type argsOffsets struct {
	mm, argStart, argEnd int16
}

// kernelArgs finds argsOffsets in the running kernel's BTF, once.
var kernelArgs = sync.OnceValues(func() (argsOffsets, error) {
	m, err := btf.Kernel()
	if err != nil {
		return argsOffsets{}, err
	}
	member := func(typ, name string) (int16, error) {
		t, err := m.LookupType(typ)
		if err != nil {
			return 0, err
		}
		s, ok := types.Resolve(t).(*types.Struct)
		if !ok {
			return 0, fmt.Errorf("the kernel's %s is a %v", typ, t)
		}
		mem, ok := s.Member(name)
		if !ok || mem.Offset%8 != 0 || mem.Offset/8 > 1<<15-8 {
			return 0, fmt.Errorf("the kernel's %s has no member %s this runtime can read", typ, name)
		}
		return int16(mem.Offset / 8), nil
	}
	var o argsOffsets
	if o.mm, err = member("struct task_struct", "mm"); err != nil {
		return o, err
	}
	if o.argStart, err = member("struct mm_struct", "arg_start"); err != nil {
		return o, err
	}
	o.argEnd, err = member("struct mm_struct", "arg_end")
	return o, err
})

// execargs translates execargs as FreeBSD's DIF_VAR_EXECARGS: the
// current process's arguments separated by spaces, read from where exec
// left them in its memory (mm->arg_start to arg_end), at most strsize-1
// bytes, in strsize zeroed bytes of scratch. The bytes are the user's,
// read as bpf_probe_read_user reads the current task's memory; a kernel
// thread, which has no such memory, or arguments that cannot be read
// without a fault (a page swapped out), give "". As Linux keeps the
// arguments in one block, each ended by a NUL, the NULs but the last
// byte's become spaces, as Oracle's DTrace for Linux builds pr_psargs.
func (t *translator) execargs(pc int, in dif.Instr, local func(string) string) error {
	o, err := kernelArgs()
	if err != nil {
		return &Error{pc, in, fmt.Sprintf("execargs needs the kernel's task and mm structs: %v", err)}
	}
	strsize, scratch := int32(t.l.strsize), int32(t.l.scratch)
	const n, start = keySlot, keySlot + 8 // the length, arg_start
	t.emit(storeImm64(asm.R10, n, 0))
	// readWord reads the word at off from the address in R3 into R0; a
	// fault leaves "".
	readWord := func(off int16) {
		t.emit(asm.Add.Imm(asm.R3, int32(off)))
		t.emit(asm.Mov.Reg(asm.R1, asm.R10))
		t.emit(asm.Add.Imm(asm.R1, bufSlot))
		t.emit(asm.Mov.Imm(asm.R2, 8))
		t.emit(asm.FnProbeReadKernel.Call())
		t.emit(asm.JNE.Imm(asm.R0, 0, local("args_none")))
		t.emit(asm.LoadMem(asm.R0, asm.R10, bufSlot, asm.DWord))
	}
	t.emit(asm.FnGetCurrentTask.Call())
	t.emit(asm.Mov.Reg(asm.R3, asm.R0))
	readWord(o.mm)
	t.emit(asm.JEq.Imm(asm.R0, 0, local("args_none")))
	t.emit(asm.StoreMem(asm.R10, start, asm.R0, asm.DWord))
	t.emit(asm.Mov.Reg(asm.R3, asm.R0))
	readWord(o.argEnd)
	t.emit(asm.LoadMem(asm.R3, asm.R10, start, asm.DWord))
	t.emit(asm.StoreMem(asm.R10, n, asm.R0, asm.DWord))
	readWord(o.argStart)
	t.emit(asm.StoreMem(asm.R10, start, asm.R0, asm.DWord))
	t.emit(asm.LoadMem(asm.R2, asm.R10, n, asm.DWord))
	t.emit(asm.Sub.Reg(asm.R2, asm.R0))
	t.emit(asm.JSLE.Imm(asm.R2, 0, local("args_none")))
	t.emit(asm.JLE.Imm(asm.R2, strsize-1, local("args_fit")))
	t.emit(asm.Mov.Imm(asm.R2, strsize-1))
	t.mark(local("args_fit"))
	t.emit(asm.StoreMem(asm.R10, n, asm.R2, asm.DWord))
	t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.Mov.Reg(asm.R3, asm.R0))
	t.emit(asm.FnProbeReadUser.Call())
	t.emit(asm.JNE.Imm(asm.R0, 0, local("args_none")))
	// Spaces for the NULs between the arguments (bytes 0…0 become
	// ' '…), all but the last byte read.
	t.emit(asm.LoadMem(asm.R1, asm.R10, n, asm.DWord))
	t.emit(asm.Add.Imm(asm.R1, -1))
	t.emit(asm.JSLE.Imm(asm.R1, 0, local("args_copy")))
	t.loop(t.callback("execargs", func() { t.caseStep("execargs", 0, 0, ' ') }))
	t.emit(asm.Ja.Label(local("args_copy")))
	t.mark(local("args_none"))
	t.emit(storeImm64(asm.R10, n, 0))
	t.mark(local("args_copy"))
	t.emit(asm.Mov.Imm(asm.R1, strsize))
	t.alloc(pc, in.RD(), local)
	// The arguments into the zeroed scratch, its address bounded
	// again for the verifier.
	t.emit(asm.LoadMem(asm.R2, asm.R10, n, asm.DWord))
	t.emit(asm.JEq.Imm(asm.R2, 0, local("args_done")))
	t.emit(asm.JGT.Imm(asm.R2, strsize-1, local("args_done")))
	t.get(asm.R1, in.RD())
	t.emit(asm.LoadMem(asm.R3, rState, stateScrBase, asm.DWord))
	t.emit(asm.Sub.Reg(asm.R1, asm.R3))
	t.emit(asm.And.Imm(asm.R1, scratch-1))
	t.emit(asm.Add.Reg(asm.R1, rScratch))
	t.emit(asm.LoadMem(asm.R3, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.FnProbeReadKernel.Call())
	t.mark(local("args_done"))
	t.get(asm.R0, in.RD())
	return nil
}
