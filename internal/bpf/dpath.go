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
	var o pathOffsets
	err := kernelOffsets([]kernelMember{
		{"struct path", "mnt", &o.pathMnt},
		{"struct path", "dentry", &o.pathDentry},
		{"struct vfsmount", "mnt_root", &o.mntRoot},
		{"struct mount", "mnt", &o.mountMnt},
		{"struct mount", "mnt_parent", &o.mountParent},
		{"struct mount", "mnt_mountpoint", &o.mountMountpoint},
		{"struct dentry", "d_parent", &o.dentryParent},
		{"struct dentry", "d_name.name", &o.dentryName},
		{"struct dentry", "d_name.len", &o.dentryNameLen},
	})
	return o, err
})

// mountOffsets are the byte offsets of the members d_path_dentry reads
// to find the first mount of a dentry's file system. Since Linux 6.18
// a super block's s_mounts points at the mount made last, each linked
// to the one made before it by mnt_next_for_sb; before, s_mounts was a
// list_head this runtime does not walk.
type mountOffsets struct {
	dentrySb, sbMounts, mountNext int32
}

// kernelMounts finds mountOffsets in the running kernel's BTF, once.
var kernelMounts = sync.OnceValues(func() (mountOffsets, error) {
	var o mountOffsets
	err := kernelOffsets([]kernelMember{
		{"struct dentry", "d_sb", &o.dentrySb},
		{"struct super_block", "s_mounts", &o.sbMounts},
		{"struct mount", "mnt_next_for_sb", &o.mountNext},
	})
	return o, err
})

// A kernelMember is a member of a kernel structure the runtime reads,
// a path of names through nested structs, and where its byte offset
// goes.
type kernelMember struct {
	typ  string
	path string
	off  *int32
}

// kernelOffsets finds the offsets of members in the running kernel's
// BTF.
func kernelOffsets(members []kernelMember) error {
	m, err := btf.Kernel()
	if err != nil {
		return err
	}
	for _, f := range members {
		t, err := m.LookupType(f.typ)
		if err != nil {
			return err
		}
		s, ok := types.Resolve(t).(*types.Struct)
		if !ok {
			return fmt.Errorf("the kernel's %s is a %v", f.typ, t)
		}
		off, ok := memberOffset(s, strings.Split(f.path, "."))
		if !ok || off < 0 || off%8 != 0 || off/8 > 1<<15 {
			return fmt.Errorf("the kernel's %s has no member %s this runtime can read", f.typ, f.path)
		}
		*f.off = int32(off / 8)
	}
	return nil
}

// Bounds of d_path's walk: the steps it takes from the file up to the
// root (a crossing from a mount's root to where it is mounted is one),
// and the bytes of a name it copies (NAME_MAX).
const (
	pathSteps   = 128
	pathNameMax = 255
)

// mountSteps bounds d_path_dentry's walk from the newest mount of a
// file system to its first: past it, the mount reached names the file.
const mountSteps = 4096

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
//
// d_path_dentry(d) walks the same way from the dentry d, in the first
// mount of its file system: the oldest of its super block's mounts,
// found within mountSteps of the newest. A file system mounted several
// times (bound, or copied into another mount namespace) is named
// through the mount made first of those still there, which for the root
// file system is the root of the tree; a file outside the directory a
// mount binds, or of a file system of no mount, is named from the root
// of its file system.
func (t *translator) dpath(pc int, in dif.Instr, arg func(asm.Register, int), local func(string) string) error {
	o, err := kernelPath()
	if err != nil {
		return &Error{pc, in, fmt.Sprintf("%s() needs the kernel's path structures: %v", dif.SubrName(in.Subr()), err)}
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
	if in.Subr() == dif.SubrDPathDentry {
		m, err := kernelMounts()
		if err != nil {
			return &Error{pc, in, fmt.Sprintf("d_path_dentry() needs the kernel's mount structures: %v", err)}
		}
		arg(asm.R3, 0)
		t.putLoop(pathWordDentry, asm.R3)
		read(pathWordMnt, m.dentrySb)
		t.getLoop(asm.R3, rState, pathWordMnt)
		read(pathWordMnt, m.sbMounts)
		t.emit(asm.Mov.Imm(asm.R1, mountSteps))
		t.loop(t.callback("dpath_mount", func() { t.dpathMount(m) }))
		// From the struct mount to its struct vfsmount.
		t.getLoop(asm.R3, rState, pathWordMnt)
		t.emit(asm.JEq.Imm(asm.R3, 0, local("nomount")))
		t.emit(asm.Add.Imm(asm.R3, o.mountMnt))
		t.putLoop(pathWordMnt, asm.R3)
		t.mark(local("nomount"))
	} else {
		arg(asm.R3, 0)
		read(pathWordDentry, o.pathDentry)
		arg(asm.R3, 0)
		read(pathWordMnt, o.pathMnt)
	}
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

// dpathMount is one step of d_path_dentry's walk from a super block's
// newest mount, in the word pathWordMnt, to the mount made before it.
func (t *translator) dpathMount(m mountOffsets) {
	const slot = -16
	t.getLoop(asm.R3, cState, pathWordMnt)
	t.emit(asm.JEq.Imm(asm.R3, 0, "cb_dpath_mount_end"))
	t.emit(storeImm64(asm.R10, slot, 0))
	t.emit(asm.Add.Imm(asm.R3, m.mountNext))
	t.emit(asm.Mov.Reg(asm.R1, asm.R10))
	t.emit(asm.Add.Imm(asm.R1, slot))
	t.emit(asm.Mov.Imm(asm.R2, 8))
	t.emit(asm.FnProbeReadKernel.Call())
	t.emit(asm.LoadMem(asm.R0, asm.R10, slot, asm.DWord))
	t.emit(asm.JEq.Imm(asm.R0, 0, "cb_dpath_mount_end"))
	t.emit(asm.StoreMem(cState, loopWord(pathWordMnt), asm.R0, asm.DWord))
	t.more()
	t.mark("cb_dpath_mount_end")
	t.stop()
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
