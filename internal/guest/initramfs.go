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
	src  string // the host file holding the contents, when data is nil
	size int64  // src's size
}

const (
	modeDir  = 0o040000
	modeFile = 0o100000
	modeLink = 0o120000
)

// File adds a file holding data; mode is its permission bits.
func (r *Initramfs) File(name string, data []byte, mode os.FileMode) {
	r.add(name, entry{mode: modeFile | uint32(mode.Perm()), data: data})
}

// HostFile adds the host's file src as name, read only when the archive
// is written, so that large files (a vmlinux) are not held in memory.
func (r *Initramfs) HostFile(name, src string, mode os.FileMode) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if st.Size() > 0xffffffff {
		// newc's size field has eight hex digits.
		return fmt.Errorf("%s: %d bytes, past the 4 GB a cpio entry holds", src, st.Size())
	}
	r.add(name, entry{mode: modeFile | uint32(mode.Perm()), src: src, size: st.Size()})
	return nil
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
	r.add(name, entry{mode: modeLink | 0o777, data: []byte(target)})
}

// Dir adds an empty directory.
func (r *Initramfs) Dir(name string) {
	r.add(name, entry{mode: modeDir | 0o755})
}

func (r *Initramfs) add(name string, e entry) {
	if r.entries == nil {
		r.entries = map[string]entry{}
	}
	name = strings.TrimPrefix(path.Clean("/"+name), "/")
	for dir := path.Dir(name); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if _, ok := r.entries[dir]; !ok {
			r.entries[dir] = entry{mode: modeDir | 0o755}
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
	if err := r.write(zw); err != nil {
		return cw.n, err
	}
	err = zw.Close()
	return cw.n, err
}

// WriteUncompressed writes the archive as WriteTo does but not
// compressed: a large file then costs the guest a copy, where gunzip
// under TCG would cost it seconds a hundred megabytes. The kernel takes
// an uncompressed archive after a compressed one, at a four-byte
// boundary of the whole (see PadTo4).
func (r *Initramfs) WriteUncompressed(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	err := r.write(cw)
	return cw.n, err
}

func (r *Initramfs) write(w io.Writer) error {
	names := make([]string, 0, len(r.entries))
	for name := range r.entries {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		if err := writeEntry(w, uint32(i+1), name, r.entries[name]); err != nil {
			return err
		}
	}
	// The trailer ends the archive.
	return writeEntry(w, 0, "TRAILER!!!", entry{})
}

// writeEntry writes one newc header, name and data, each of the last
// two padded to four bytes as the format wants.
func writeEntry(w io.Writer, ino uint32, name string, e entry) error {
	nlink := 1
	if e.mode&0o170000 == modeDir {
		nlink = 2
	}
	size := int64(len(e.data))
	if e.src != "" {
		size = e.size
	}
	hdr := fmt.Sprintf("070701%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
		ino, e.mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(name)+1, 0)
	buf := []byte(hdr + name + "\x00")
	buf = append(buf, make([]byte, pad4(len(buf)))...)
	buf = append(buf, e.data...)
	if _, err := w.Write(buf); err != nil {
		return err
	}
	if e.src != "" {
		if err := copyFile(w, e.src, size); err != nil {
			return err
		}
	}
	_, err := w.Write(make([]byte, pad4(int(size%4))))
	return err
}

// copyFile writes the size bytes of the file src, failing if it has
// changed size since the header said how many there are.
func copyFile(w io.Writer, src string, size int64) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("%s: %d bytes, not %d as when added", src, n, size)
	}
	return nil
}

// PadTo4 writes the zeros that bring n bytes written to a multiple of
// four: the kernel looks for an archive after another only there.
func PadTo4(w io.Writer, n int64) (int64, error) {
	k, err := w.Write(make([]byte, pad4(int(n%4))))
	return int64(k), err
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
