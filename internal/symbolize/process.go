package symbolize

import (
	"path"
	"slices"
	"time"

	"github.com/kdtrace/kdtrace/internal/consumer"
)

// A process is what a process's maps said when they were last read.
type process struct {
	read time.Time
	objs []object // by start
}

// An object is one load of a file (or the vDSO) in a process.
type object struct {
	name       string // the base name dtrace shows
	start, end uint64
	bias       uint64   // ELF address + bias = address in the process
	file       *objFile // nil when the file is no ELF or cannot be read
}

// A fileKey identifies a file's contents: a file rewritten in place
// changes size or time, one replaced changes inode.
type fileKey struct {
	dev   string
	inode uint64
	size  int64
	mtime int64
}

// group splits maps into loads of files: a load is a run of mappings of
// one file whose offsets do not decrease (the anonymous mapping of a
// .bss may come between them). The vDSO is a load of its own; other
// memory belongs to no object.
func group(maps []Mapping) [][]Mapping {
	var out [][]Mapping
	var cur []Mapping
	for _, m := range maps {
		switch {
		case m.Path == "[vdso]":
			if len(cur) > 0 {
				out = append(out, cur)
			}
			out = append(out, []Mapping{m})
			cur = nil
			continue
		case !m.File():
			continue
		}
		if len(cur) > 0 {
			last := cur[len(cur)-1]
			if last.Path == m.Path && last.Dev == m.Dev && last.Inode == m.Inode && m.Offset >= last.Offset {
				cur = append(cur, m)
				continue
			}
			out = append(out, cur)
		}
		cur = []Mapping{m}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// newObject places file's load made of maps; file may be nil.
func newObject(maps []Mapping, file *objFile) object {
	o := object{name: path.Base(maps[0].Path), start: maps[0].Start, end: maps[len(maps)-1].End, file: file}
	if file == nil {
		return o
	}
	if b, ok := file.loadBias(maps); ok {
		o.bias = b
		// A load the loader made has code; an ELF file mapped as data
		// (a program reading its own binary) claims no more memory
		// than its mappings.
		if lo, hi, ok := file.extent(b); ok && slices.ContainsFunc(maps, func(m Mapping) bool { return m.Perms[2] == 'x' }) {
			o.start, o.end = min(o.start, lo), max(o.end, hi)
		}
		return o
	}
	// No mapping lies in a segment: the file on disk is not the one
	// mapped. Its symbols would name the wrong code.
	o.file = nil
	return o
}

// lookup returns the symbol of the process holding addr, or its object.
func (p *process) lookup(addr uint64) (consumer.Symbol, bool) {
	// Of the objects holding addr, the one starting last: an object's
	// extent, stretched over its segments, may enclose a small one
	// mapped in a gap of it.
	for i := len(p.objs) - 1; i >= 0; i-- {
		o := &p.objs[i]
		if addr < o.start || addr >= o.end {
			continue
		}
		if o.file != nil {
			if s, ok := o.file.lookup(addr - o.bias); ok {
				return consumer.Symbol{Object: o.name, Name: s.name, Value: s.value + o.bias}, true
			}
		}
		return consumer.Symbol{Object: o.name}, true
	}
	return consumer.Symbol{}, false
}
