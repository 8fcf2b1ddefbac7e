package bpf

import (
	"fmt"
	"sync"

	"github.com/kdtrace/kdtrace/btf"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// taskOffsets are the byte offsets of the members of the running
// kernel's struct task_struct that ppid reads: the parent's task and
// its thread group's id.
type taskOffsets struct {
	realParent, tgid int16
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
		name string
		off  *int16
	}{{"real_parent", &o.realParent}, {"tgid", &o.tgid}} {
		mem, ok := s.Member(f.name)
		if !ok || mem.Offset%8 != 0 || mem.Offset/8 > 1<<15-8 {
			return taskOffsets{}, fmt.Errorf("the kernel's struct task_struct has no member %s this runtime can read", f.name)
		}
		*f.off = int16(mem.Offset / 8)
	}
	return o, nil
})
