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

// pathOffsets are the byte offsets of the members of the running
// kernel's structures that d_path reads.
type pathOffsets struct {
	pathMnt, pathDentry                     int32
	mntRoot                                 int32 // struct vfsmount's mnt_root
	mountMnt, mountParent, mountMountpoint  int32 // struct mount's
	dentryParent, dentryName, dentryNameLen int32
}

// kernelPath finds pathOffsets in the running kernel's BTF, once.
var kernelPath = sync.OnceValues(func() (pathOffsets, error) {
	m, err := btf.Kernel()
	if err != nil {
		return pathOffsets{}, err
	}
	var o pathOffsets
	for _, f := range []struct {
		typ  string
		path string
		off  *int32
	}{
		{"struct path", "mnt", &o.pathMnt},
		{"struct path", "dentry", &o.pathDentry},
		{"struct vfsmount", "mnt_root", &o.mntRoot},
		{"struct mount", "mnt", &o.mountMnt},
		{"struct mount", "mnt_parent", &o.mountParent},
		{"struct mount", "mnt_mountpoint", &o.mountMountpoint},
		{"struct dentry", "d_parent", &o.dentryParent},
		{"struct dentry", "d_name.name", &o.dentryName},
		{"struct dentry", "d_name.len", &o.dentryNameLen},
	} {
		t, err := m.LookupType(f.typ)
		if err != nil {
			return pathOffsets{}, err
		}
		s, ok := types.Resolve(t).(*types.Struct)
		if !ok {
			return pathOffsets{}, fmt.Errorf("the kernel's %s is a %v", f.typ, t)
		}
		off, ok := memberOffset(s, strings.Split(f.path, "."))
		if !ok || off < 0 || off%8 != 0 || off/8 > 1<<15 {
			return pathOffsets{}, fmt.Errorf("the kernel's %s has no member %s this runtime can read", f.typ, f.path)
		}
		*f.off = int32(off / 8)
	}
	return o, nil
})

// Bounds of d_path's walk: the steps it takes from the file up to the
// root (a crossing from a mount's root to where it is mounted is one),
// and the bytes of a name it copies (NAME_MAX).
const (
	pathSteps   = 128
	pathNameMax = 255
)

// The callbacks' words of d_path's walk.
const (
	pathWordDentry = iota // the dentry the step is at
	pathWordMnt           // its struct vfsmount
	pathWordPos           // where in MapStrBuf the path built so far starts
	pathWordDone          // 1 once the walk reached the root, 2 if a name did not fit
)

// dpath translates d_path(p), p a struct path *: the path of p's file
// from the root of the mount tree, built in MapStrBuf from its end (the
// offset strsize-1) back, each step prepending a slash and the name of
// the dentry it is at and going up to its parent, or crossing from the
// root of a mount to where it is mounted, until the root of the tree.
// As illumos's v_path, the path does not stop at the current process's
// root: a chrooted process's root is the directory it was chrooted to,
// where Linux's d_path, relative to that root, would give "/". A path of
// more steps than pathSteps, or longer than strsize-4 bytes, keeps its
// last names behind "...". The root is "/".
//
// It reads what Linux's d_path reads but takes none of its locks: a
// rename or mount racing the walk can give a path that never was, as a
// probe's reads of kernel memory may.
func (t *translator) dpath(pc int, in dif.Instr, arg func(asm.Register, int), local func(string) string) error {
	o, err := kernelPath()
	if err != nil {
		return &Error{pc, in, fmt.Sprintf("d_path() needs the kernel's path structures: %v", err)}
	}
	strsize := int32(t.l.strsize)
	// read reads 8 bytes at off from the pointer in R3 into word w.
	read := func(w int, off int32) {
		t.emit(asm.Add.Imm(asm.R3, off))
		t.emit(asm.Mov.Reg(asm.R1, rState))
		t.emit(asm.Add.Imm(asm.R1, int32(loopWord(w))))
		t.emit(asm.Mov.Imm(asm.R2, 8))
		t.emit(asm.FnProbeReadKernel.Call())
	}
	arg(asm.R3, 0)
	read(pathWordDentry, o.pathDentry)
	arg(asm.R3, 0)
	read(pathWordMnt, o.pathMnt)
	t.putLoopImm(pathWordPos, strsize-1)
	t.putLoopImm(pathWordDone, 0)
	t.room(pc, strsize, local("room"))
	t.emit(asm.Mov.Imm(asm.R1, pathSteps))
	t.loop(t.callback("dpath", func() { t.dpathStep(o) }))
	// R3 where the path starts, R2 its bytes.
	t.getLoop(asm.R3, rState, pathWordPos)
	t.getLoop(asm.R1, rState, pathWordDone)
	t.emit(asm.JEq.Imm(asm.R1, 1, local("whole")))
	// Cut short: "..." before the names that fit.
	t.emit(asm.JSLT.Imm(asm.R3, 3, local("whole")))
	t.emit(asm.JGT.Imm(asm.R3, strsize, local("whole")))
	t.emit(asm.Add.Imm(asm.R3, -3))
	t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.Add.Reg(asm.R1, asm.R3))
	for i := int16(0); i < 3; i++ {
		t.emit(asm.StoreImm(asm.R1, i, '.', asm.Byte))
	}
	t.mark(local("whole"))
	t.emit(asm.JNE.Imm(asm.R3, strsize-1, local("named")))
	// No name: the root.
	t.emit(asm.Add.Imm(asm.R3, -1))
	t.emit(asm.LoadMem(asm.R1, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.Add.Reg(asm.R1, asm.R3))
	t.emit(asm.StoreImm(asm.R1, 0, '/', asm.Byte))
	t.mark(local("named"))
	t.emit(asm.Mov.Imm(asm.R2, strsize-1))
	t.emit(asm.Sub.Reg(asm.R2, asm.R3))
	t.takeString(in.RD(), strsize, local("take"))
	return nil
}

// dpathStep is one step of d_path's walk.
func (t *translator) dpathStep(o pathOffsets) {
	const (
		slot = -16 // a word read from the kernel
		mnt  = -24 // the struct mount of the step's vfsmount, or the dentry's parent
		dst  = -32 // where the name goes
		size = -40 // its bytes
		name = -48 // its address
	)
	// readSlot reads 8 bytes at off from the pointer in R3 into slot,
	// then R0.
	readSlot := func(off int32, size int32) {
		t.emit(storeImm64(asm.R10, slot, 0))
		t.emit(asm.Add.Imm(asm.R3, off))
		t.emit(asm.Mov.Reg(asm.R1, asm.R10))
		t.emit(asm.Add.Imm(asm.R1, slot))
		t.emit(asm.Mov.Imm(asm.R2, size))
		t.emit(asm.FnProbeReadKernel.Call())
		t.emit(asm.LoadMem(asm.R0, asm.R10, slot, asm.DWord))
	}
	done := func(code int32) {
		t.emit(storeImm64(cState, loopWord(pathWordDone), code))
		t.stop()
	}
	// At nothing: a read that failed.
	t.getLoop(asm.R1, cState, pathWordDentry)
	t.emit(asm.JEq.Imm(asm.R1, 0, "cb_dpath_end"))
	// At the root of its mount: to where the mount is mounted, unless
	// it is the root of the tree.
	t.getLoop(asm.R3, cState, pathWordMnt)
	readSlot(o.mntRoot, 8)
	t.getLoop(asm.R1, cState, pathWordDentry)
	t.emit(asm.JNE.Reg(asm.R0, asm.R1, "cb_dpath_name"))
	t.getLoop(asm.R3, cState, pathWordMnt)
	t.emit(asm.Add.Imm(asm.R3, -o.mountMnt))
	t.emit(asm.StoreMem(asm.R10, mnt, asm.R3, asm.DWord))
	readSlot(o.mountParent, 8)
	t.emit(asm.LoadMem(asm.R1, asm.R10, mnt, asm.DWord))
	t.emit(asm.JEq.Reg(asm.R0, asm.R1, "cb_dpath_end"))
	t.emit(asm.JEq.Imm(asm.R0, 0, "cb_dpath_end"))
	t.emit(asm.Add.Imm(asm.R0, o.mountMnt))
	t.emit(asm.StoreMem(cState, loopWord(pathWordMnt), asm.R0, asm.DWord))
	t.emit(asm.LoadMem(asm.R3, asm.R10, mnt, asm.DWord))
	readSlot(o.mountMountpoint, 8)
	t.emit(asm.StoreMem(cState, loopWord(pathWordDentry), asm.R0, asm.DWord))
	t.more()
	// A name: "/name" before the path so far, if it fits.
	t.mark("cb_dpath_name")
	t.getLoop(asm.R3, cState, pathWordDentry)
	readSlot(o.dentryParent, 8)
	t.getLoop(asm.R1, cState, pathWordDentry)
	t.emit(asm.JEq.Reg(asm.R0, asm.R1, "cb_dpath_end")) // a root that is no mount's
	t.emit(asm.StoreMem(asm.R10, mnt, asm.R0, asm.DWord))
	t.getLoop(asm.R3, cState, pathWordDentry)
	readSlot(o.dentryNameLen, 4)
	t.emit(asm.JGT.Imm(asm.R0, pathNameMax, "cb_dpath_long"))
	t.getLoop(asm.R1, cState, pathWordPos)
	t.emit(asm.Sub.Reg(asm.R1, asm.R0))
	// Three bytes stay free for "...".
	t.emit(asm.JSLT.Imm(asm.R1, 4, "cb_dpath_long"))
	t.emit(asm.JGT.Imm(asm.R1, int32(t.l.strsize), "cb_dpath_long"))
	// The name's bytes at R1, the slash before them.
	t.emit(asm.StoreMem(cState, loopWord(pathWordPos), asm.R1, asm.DWord))
	t.emit(asm.Mov.Reg(asm.R2, asm.R0))
	t.emit(asm.Add.Reg(asm.R1, cBuf))
	t.getLoop(asm.R3, cState, pathWordDentry)
	t.emit(asm.Add.Imm(asm.R3, o.dentryName))
	t.emit(asm.StoreMem(asm.R10, dst, asm.R1, asm.DWord))
	t.emit(asm.StoreMem(asm.R10, size, asm.R2, asm.DWord))
	t.emit(storeImm64(asm.R10, name, 0))
	t.emit(asm.Mov.Reg(asm.R1, asm.R10))
	t.emit(asm.Add.Imm(asm.R1, name))
	t.emit(asm.Mov.Imm(asm.R2, 8))
	t.emit(asm.FnProbeReadKernel.Call())
	t.emit(asm.LoadMem(asm.R1, asm.R10, dst, asm.DWord))
	t.emit(asm.LoadMem(asm.R2, asm.R10, size, asm.DWord))
	t.emit(asm.LoadMem(asm.R3, asm.R10, name, asm.DWord))
	t.emit(asm.JGT.Imm(asm.R2, pathNameMax, "cb_dpath_long"))
	t.emit(asm.FnProbeReadKernel.Call())
	t.getLoop(asm.R1, cState, pathWordPos)
	t.emit(asm.Add.Imm(asm.R1, -1))
	t.emit(asm.JSLT.Imm(asm.R1, 0, "cb_dpath_long"))
	t.emit(asm.JGT.Imm(asm.R1, int32(t.l.strsize), "cb_dpath_long"))
	t.emit(asm.StoreMem(cState, loopWord(pathWordPos), asm.R1, asm.DWord))
	t.emit(asm.Add.Reg(asm.R1, cBuf))
	t.emit(asm.StoreImm(asm.R1, 0, '/', asm.Byte))
	t.emit(asm.LoadMem(asm.R0, asm.R10, mnt, asm.DWord))
	t.emit(asm.StoreMem(cState, loopWord(pathWordDentry), asm.R0, asm.DWord))
	t.more()
	t.mark("cb_dpath_long")
	done(2)
	t.mark("cb_dpath_end")
	done(1)
}
