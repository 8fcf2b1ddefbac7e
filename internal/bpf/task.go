package bpf

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cilium/ebpf/asm"
	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/internal/btf"
)

// taskOffsets are the byte offsets of the members of the running
// kernel's struct task_struct the runtime reads: the parent's task and
// the thread group's id (ppid), the thread's id and its CPU time
// (se.sum_exec_runtime, vtimestamp).
type taskOffsets struct {
	realParent, tgid, pid, sumExec int16
}

// kernelTask finds taskOffsets in the running kernel's BTF, once.
var kernelTask = sync.OnceValues(func() (taskOffsets, error) {
	m, err := btf.Kernel()
	if err != nil {
		return taskOffsets{}, err
	}
	t, err := m.LookupType("struct task_struct")
	if err != nil {
		return taskOffsets{}, err
	}
	s, ok := types.Resolve(t).(*types.Struct)
	if !ok {
		return taskOffsets{}, fmt.Errorf("the kernel's struct task_struct is a %v", t)
	}
	var o taskOffsets
	for _, f := range []struct {
		path []string
		off  *int16
	}{{[]string{"real_parent"}, &o.realParent}, {[]string{"tgid"}, &o.tgid}, {[]string{"pid"}, &o.pid},
		{[]string{"se", "sum_exec_runtime"}, &o.sumExec}} {
		off, ok := memberOffset(s, f.path)
		if !ok || off < 0 || off%8 != 0 || off/8 > 1<<15-8 {
			return taskOffsets{}, fmt.Errorf("the kernel's struct task_struct has no member %s this runtime can read", strings.Join(f.path, "."))
		}
		*f.off = int16(off / 8)
	}
	return o, nil
})

// memberOffset is the offset in bits of the member path names in s,
// through nested structs.
func memberOffset(s *types.Struct, path []string) (int64, bool) {
	var off int64
	for i, name := range path {
		mem, ok := s.Member(name)
		if !ok {
			return 0, false
		}
		off += mem.Offset
		if i == len(path)-1 {
			break
		}
		if s, ok = types.Resolve(mem.Type).(*types.Struct); !ok {
			return 0, false
		}
	}
	return off, true
}

// maxAncestors bounds the processes progenyof() walks up from the
// current one.
const maxAncestors = 64

// progenyof translates progenyof(pid) as dtrace_dif_subr's: 1 if the
// current process is pid or descends from it, walking real_parent up
// to the idle task (its own parent) or maxAncestors processes; else 0.
// The walk's count and task are on the stack, where the verifier
// follows them through the loop.
func (t *translator) progenyof(pc int, in dif.Instr, arg func(asm.Register, int), local func(string) string) error {
	o, err := kernelTask()
	if err != nil {
		return &Error{pc, in, fmt.Sprintf("progenyof() needs the kernel's struct task_struct: %v", err)}
	}
	const count, task = keySlot, keySlot + 8
	// The callbacks' word 0 holds the pid sought, as an int.
	arg(asm.R1, 0)
	t.emit(asm.LSh.Imm(asm.R1, 32))
	t.emit(asm.RSh.Imm(asm.R1, 32))
	t.putLoop(0, asm.R1)
	t.emit(storeImm64(asm.R10, count, 0))
	t.emit(asm.FnGetCurrentTask.Call())
	t.emit(asm.StoreMem(asm.R10, task, asm.R0, asm.DWord))
	read := func(off int16, size int32) {
		t.emit(asm.LoadMem(asm.R3, asm.R10, task, asm.DWord))
		t.emit(asm.Add.Imm(asm.R3, int32(off)))
		t.emit(storeImm64(asm.R10, bufSlot, 0))
		t.emit(asm.Mov.Reg(asm.R1, asm.R10))
		t.emit(asm.Add.Imm(asm.R1, bufSlot))
		t.emit(asm.Mov.Imm(asm.R2, size))
		t.emit(asm.FnProbeReadKernel.Call())
		t.emit(asm.LoadMem(asm.R0, asm.R10, bufSlot, asm.DWord))
	}
	t.mark(local("walk"))
	t.emit(asm.LoadMem(asm.R1, asm.R10, task, asm.DWord))
	t.emit(asm.JEq.Imm(asm.R1, 0, local("no")))
	read(o.tgid, 4)
	t.getLoop(asm.R1, rState, 0)
	t.emit(asm.JEq.Reg(asm.R0, asm.R1, local("yes")))
	read(o.realParent, 8)
	t.emit(asm.LoadMem(asm.R1, asm.R10, task, asm.DWord))
	t.emit(asm.JEq.Reg(asm.R0, asm.R1, local("no")))
	t.emit(asm.StoreMem(asm.R10, task, asm.R0, asm.DWord))
	t.emit(asm.LoadMem(asm.R1, asm.R10, count, asm.DWord))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(asm.R10, count, asm.R1, asm.DWord))
	t.emit(asm.JLT.Imm(asm.R1, maxAncestors, local("walk")))
	t.mark(local("no"))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	t.emit(asm.Ja.Label(local("done")))
	t.mark(local("yes"))
	t.emit(asm.Mov.Imm(asm.R0, 1))
	t.mark(local("done"))
	t.set(in.RD(), asm.R0)
	return nil
}
