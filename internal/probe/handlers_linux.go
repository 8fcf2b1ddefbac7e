//go:build linux

package probe

import (
	"io"
	"time"

	"github.com/kdtrace/kdtrace/internal/buildid"
	"github.com/kdtrace/kdtrace/internal/cachedir"
	"github.com/kdtrace/kdtrace/internal/cachefile"
)

// The syscall provider lists the kernel's syscall handlers, which only
// /proc/kallsyms names: the kernel formats its 200,000 symbols for a
// read of it, 55 ms of system time, which every program of syscall:::
// and every enabling of a syscall probe paid. The handlers are symbols
// of the kernel image, the same at every boot (KASLR moves their
// addresses, which are not kept), so they are cached under the kernel's
// build-id.

const (
	handlersSuffix  = ".syscalls"
	handlersMagic   = "kdtrace syscall handlers\n"
	handlersVersion = 1
)

// kernelCache is where the running kernel's lists are kept between
// runs: a cache directory and the kernel's build-id, which names them.
type kernelCache struct {
	dir *cachedir.Dir
	id  string
}

// newKernelCache returns the cache in dir for the kernel running under
// sysroot, or nil without a directory or a build-id.
func newKernelCache(dir *cachedir.Dir, sysroot string) *kernelCache {
	if dir == nil {
		return nil
	}
	id, err := buildid.Running(sysroot, KernelModule)
	if err != nil {
		return nil
	}
	return &kernelCache{dir, id}
}

// cachedHandlers returns kallsymsHandlers(kallsyms, prefix), from kc
// when it holds them, else from kallsyms, then kept in kc; kc may be nil.
func cachedHandlers(kc *kernelCache, kallsyms, prefix string) ([]string, error) {
	if kc == nil {
		return kallsymsHandlers(kallsyms, prefix)
	}
	dir, name := kc.dir, kc.id+handlersSuffix
	if names, ok := loadHandlers(dir, name, prefix); ok {
		return names, nil
	}
	names, err := kallsymsHandlers(kallsyms, prefix)
	if err == nil && len(names) > 0 {
		e := cachefile.Encoder{}
		e.Str(handlersMagic)
		e.U32(handlersVersion)
		e.Str(prefix)
		e.U32(uint32(len(names)))
		for _, n := range names {
			e.Str(n)
		}
		e.Seal()
		cachefile.StoreFile(dir, name, e.B) // failing costs only the next run's time
	}
	return names, err
}

// loadHandlers reads the handlers kept in dir's file name, reporting
// whether they are there, whole, and named with prefix.
func loadHandlers(dir *cachedir.Dir, name, prefix string) ([]string, bool) {
	f, err := dir.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() > 1<<20 {
		return nil, false
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, false
	}
	body, ok := cachefile.Unseal(data)
	if !ok {
		return nil, false
	}
	d := cachefile.Decoder{B: body}
	if d.Str() != handlersMagic || d.U32() != handlersVersion || d.Str() != prefix {
		return nil, false
	}
	n := d.U32()
	if uint64(n) > uint64(len(d.B))/4 {
		return nil, false
	}
	names := make([]string, 0, n)
	for range n {
		names = append(names, d.Str())
	}
	if d.Bad || len(d.B) != 0 {
		return nil, false
	}
	cachefile.Used(dir, name, st.ModTime(), time.Now())
	return names, true
}
