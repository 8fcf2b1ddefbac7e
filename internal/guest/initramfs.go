package guest

import (
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// An Initramfs is the guest's root file system as the kernel unpacks
// it: a newc cpio archive, gzipped. Directories leading to a file are
// made as needed.
type Initramfs struct {
	entries map[string]entry
}

type entry struct {
	mode uint32 // type and permission bits, as stat's st_mode
	data []byte // contents; a symlink's target
}

const (
	modeDir  = 0o040000
	modeFile = 0o100000
	modeLink = 0o120000
)

// File adds a file holding data; mode is its permission bits.
func (r *Initramfs) File(name string, data []byte, mode os.FileMode) {
	r.add(name, entry{modeFile | uint32(mode.Perm()), data})
}

// Program adds the host's executable src as name, refusing one that
// needs a dynamic loader: the guest has none.
func (r *Initramfs) Program(name, src string) error {
	f, err := elf.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s: %w", src, errNotStatic)
		}
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	r.File(name, data, 0o755)
	return nil
}

// Symlink adds name pointing to target.
func (r *Initramfs) Symlink(name, target string) {
	r.add(name, entry{modeLink | 0o777, []byte(target)})
}

// Dir adds an empty directory.
func (r *Initramfs) Dir(name string) {
	r.add(name, entry{modeDir | 0o755, nil})
}

func (r *Initramfs) add(name string, e entry) {
	if r.entries == nil {
		r.entries = map[string]entry{}
	}
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	for dir := path.Dir(name); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if _, ok := r.entries[dir]; !ok {
			r.entries[dir] = entry{modeDir | 0o755, nil}
		}
	}
	r.entries[name] = e
}

// WriteTo writes the archive, gzipped, entries in name order so that
// a directory comes before what it holds and the bytes are the same
// from run to run.
func (r *Initramfs) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	zw, err := gzip.NewWriterLevel(cw, gzip.BestSpeed)
	if err != nil {
		return 0, err
	}
	names := make([]string, 0, len(r.entries))
	for name := range r.entries {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		if err := writeEntry(zw, uint32(i+1), name, r.entries[name]); err != nil {
			return cw.n, err
		}
	}
	// The trailer ends the archive.
	if err := writeEntry(zw, 0, "TRAILER!!!", entry{}); err != nil {
		return cw.n, err
	}
	err = zw.Close()
	return cw.n, err
}

// writeEntry writes one newc header, name and data, each of the last
// two padded to four bytes as the format wants.
func writeEntry(w io.Writer, ino uint32, name string, e entry) error {
	nlink := 1
	if e.mode&0o170000 == modeDir {
		nlink = 2
	}
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, e.mode, 0, 0, nlink, 0, len(e.data), 0, 0, 0, 0, len(name)+1, 0)
	buf := []byte(hdr + name + "\x00")
	buf = append(buf, make([]byte, pad4(len(buf)))...)
	buf = append(buf, e.data...)
	buf = append(buf, make([]byte, pad4(len(e.data)))...)
	_, err := w.Write(buf)
	return err
}

func pad4(n int) int { return (4 - n%4) % 4 }

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// errNotStatic is returned for a program the initramfs cannot run: it
// holds no dynamic loader or libraries.
var errNotStatic = errors.New("not a static executable")
