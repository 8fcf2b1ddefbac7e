// Package mmap maps files read-only for the large inputs kdtrace reads
// (kernel images, their DWARF, BTF, the kinst index cache), so that a
// file costs only the pages read and the kernel may drop them again.
// Where mapping is impossible, Map fails and callers read the file.
package mmap

import "errors"

// ErrUnsupported is Map's error where files cannot be mapped: another
// system, an empty file, or one too large for the address space.
var ErrUnsupported = errors.New("cannot map file")
