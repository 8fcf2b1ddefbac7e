//go:build freebsd

package debuginfo

import (
	"fmt"
	"syscall"
	"unsafe"
)

// Kernel makes the set of the running FreeBSD kernel (kern.bootfile)
// and its loaded modules (kldnext/kldstat), each with its DWARF found as
// OpenImage does, in particular at <root>/<path>.debug. A module without
// debug info is skipped with a warning. This code is compiled but not
// yet run on FreeBSD.
func Kernel(opts Options) (*Set, error) {
	boot, err := syscall.Sysctl("kern.bootfile")
	if err != nil || boot == "" {
		boot = "/boot/kernel/kernel"
	}
	s := &Set{}
	opts = s.collecting(opts)
	k, err := openImage("kernel", boot, nil, opts)
	if err != nil {
		return nil, fmt.Errorf("running kernel: %w", err)
	}
	images := []*Image{k}
	for _, path := range loadedFiles() {
		if path == boot {
			continue
		}
		img, err := openImage(moduleName(path), path, nil, opts)
		if err != nil {
			s.warnSkip(path, err)
			continue
		}
		images = append(images, img)
	}
	set := NewSet(images...)
	set.warnings = s.warnings
	return set, nil
}

// kldFileStat is struct kld_file_stat of <sys/linker.h>.
type kldFileStat struct {
	version  int32
	name     [1024]byte
	refs     int32
	id       int32
	address  uintptr
	size     uintptr
	pathname [1024]byte
}

// loadedFiles lists the paths of the kernel's linker files: the
// kernel, then the loaded modules.
func loadedFiles() []string {
	var out []string
	id := 0
	for {
		next, _, errno := syscall.Syscall(syscall.SYS_KLDNEXT, uintptr(id), 0, 0)
		if errno != 0 || next == 0 {
			return out
		}
		id = int(next)
		var st kldFileStat
		st.version = int32(unsafe.Sizeof(st))
		if _, _, errno := syscall.Syscall(syscall.SYS_KLDSTAT, uintptr(id), uintptr(unsafe.Pointer(&st)), 0); errno != 0 {
			continue
		}
		out = append(out, cstr(st.pathname[:]))
	}
}

func cstr(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
