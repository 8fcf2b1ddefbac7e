//go:build linux

package probe

import (
	"os"
	"time"
	"unsafe"

	"github.com/kdtrace/kdtrace/internal/cachedir"
	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/mmap"
)

// The fbt and kinst providers list the kernel's functions from its BTF:
// walking its 127,000 records for the 56,000 functions and indexing
// their names cost a glob such as fbt::vfs_*:entry three times the
// rest of its compile. The list depends only on the kernel image, so it
// is kept in the cache under the kernel's build-id and mapped back in
// place.

const (
	funcsSuffix  = ".funcs"
	funcsMagic   = "kdtrace kernel functions\n"
	funcsVersion = 1
)

// cachedKernelFuncs is loadBTFFuncs(path, KernelModule, 0, types) for
// the running kernel's BTF at path, from kc when it holds the list,
// else from the BTF, then kept in kc; kc may be nil.
func cachedKernelFuncs(kc *kernelCache, path string, types func(string) (KernelTypes, error)) (*funcList, uint32, error) {
	st, err := os.Stat(path)
	if kc == nil || err != nil {
		return loadBTFFuncs(path, KernelModule, 0, types)
	}
	dir, name := kc.dir, kc.id+funcsSuffix
	if l, strLen, ok := loadFuncs(dir, name, uint64(st.Size())); ok {
		return l, strLen, nil
	}
	l, strLen, err := loadBTFFuncs(path, KernelModule, 0, types)
	if err == nil {
		storeFuncs(dir, name, uint64(st.Size()), l, strLen)
	}
	return l, strLen, err
}

// storeFuncs writes l, listed from BTF of btfSize bytes whose string
// section is strLen bytes, to dir's file name: its names back to back,
// their spans and its hash table. Failing costs only the next run's
// time.
func storeFuncs(dir *cachedir.Dir, name string, btfSize uint64, l *funcList, strLen uint32) {
	e := cachefile.Encoder{}
	e.Str(funcsMagic)
	e.U32(funcsVersion)
	e.U64(btfSize)
	e.U32(strLen)
	// The names alone, each once, in the list's order.
	var names []byte
	spans := make([]span, len(l.spans))
	for i := range l.spans {
		n := l.name(i)
		spans[i] = span{uint32(len(names)), uint32(len(n))}
		names = append(names, n...)
	}
	e.U64(uint64(len(names)))
	e.B = append(e.B, names...)
	for len(e.B)%8 != 0 {
		e.U8(0) // the tables are read in place, 4-aligned
	}
	e.U64(uint64(len(spans)))
	for _, s := range spans {
		e.U32(s.off)
		e.U32(s.len)
	}
	e.U64(uint64(len(l.table)))
	for _, s := range l.table {
		e.U32(s.hash)
		e.U32(s.ref)
	}
	e.Seal()
	cachefile.StoreFile(dir, name, e.B)
}

// loadFuncs maps the list kept in dir's file name, reporting whether it
// is there, whole, and of BTF of btfSize bytes. The mapping is never
// released: the names taken from the list are its bytes.
func loadFuncs(dir *cachedir.Dir, name string, btfSize uint64) (*funcList, uint32, bool) {
	f, err := dir.Open(name)
	if err != nil {
		return nil, 0, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, false
	}
	data, err := mmap.Map(f, st.Size())
	if err != nil {
		return nil, 0, false
	}
	l, strLen, ok := decodeFuncs(data, btfSize)
	if !ok {
		mmap.Unmap(data)
		return nil, 0, false
	}
	cachefile.Used(dir, name, st.ModTime(), time.Now())
	return l, strLen, true
}

// decodeFuncs reads a list written by storeFuncs in place.
func decodeFuncs(data []byte, btfSize uint64) (*funcList, uint32, bool) {
	body, ok := cachefile.Unseal(data)
	if !ok {
		return nil, 0, false
	}
	d := cachefile.Decoder{B: body}
	if d.Str() != funcsMagic || d.U32() != funcsVersion || d.U64() != btfSize {
		return nil, 0, false
	}
	strLen := d.U32()
	names := d.Table(1).Bytes()
	d.Take(uint64(-(len(body) - len(d.B)) & 7)) // to the tables' alignment
	spans, ok1 := cachefile.Words[span](d.Table(8))
	table, ok2 := cachefile.Words[slot](d.Table(8))
	if d.Bad || len(d.B) != 0 || !ok1 || !ok2 || len(table) == 0 || len(table)&(len(table)-1) != 0 {
		return nil, 0, false
	}
	for _, s := range spans {
		if uint64(s.off)+uint64(s.len) > uint64(len(names)) {
			return nil, 0, false
		}
	}
	for _, s := range table {
		if s.ref > uint32(len(spans)) {
			return nil, 0, false
		}
	}
	l := &funcList{module: KernelModule, spans: spans, table: table, mask: uint32(len(table) - 1)}
	if len(names) > 0 {
		l.strs = unsafe.String(unsafe.SliceData(names), len(names))
	}
	return l, strLen, true
}
