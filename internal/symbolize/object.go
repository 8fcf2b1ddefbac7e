package symbolize

import (
	"bytes"
	"cmp"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// pageSize is the granule of mappings' offsets.
var pageSize = uint64(os.Getpagesize())

// An objFile is the symbols of one ELF file, shared by every load of it
// in every process. Its symbol tables are read on first lookup; until
// then the file stays open, so that it can be read after the processes
// mapping it have exited.
type objFile struct {
	loads []elf.ProgHeader
	// debug finds the file's separate debug file, given its build ID
	// and its .gnu_debuglink.
	debug func(buildID []byte, link string, crc uint32) string

	mu      sync.Mutex
	f       *elf.File // nil once read, or closed
	closer  io.Closer
	dynRead bool
	dyn     symtab
	sym     symtab
}

// newObjFile reads the headers of the ELF image r, which closer
// closes (nil: nothing to close).
func newObjFile(r io.ReaderAt, closer io.Closer) (*objFile, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, err
	}
	o := &objFile{f: f, closer: closer}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			o.loads = append(o.loads, p.ProgHeader)
		}
	}
	return o, nil
}

// openObjFile opens the ELF file at path.
func openObjFile(path string) (*objFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	o, err := newObjFile(f, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return o, nil
}

// readAll reads both symbol tables, and closes the file.
func (o *objFile) readAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.readDyn()
	o.readSym()
}

// close releases the file; the symbols not read by then are never
// found.
func (o *objFile) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.release()
}

// release closes the file; the caller holds o.mu.
func (o *objFile) release() {
	if o.closer != nil {
		o.closer.Close()
	}
	o.f, o.closer = nil, nil
}

// readDyn reads .dynsym, once; the caller holds o.mu.
func (o *objFile) readDyn() {
	if o.dynRead || o.f == nil {
		return
	}
	o.dynRead = true
	if dyn, err := o.f.DynamicSymbols(); err == nil {
		o.dyn = newSymtab(dyn)
	}
}

// readSym reads .symtab, or the debug file's, once, and closes the
// file; the caller holds o.mu.
func (o *objFile) readSym() {
	if o.f == nil {
		return
	}
	defer o.release()
	st, err := o.f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		st = o.debugSymbols()
	}
	o.sym = newSymtab(st)
}

// debugSymbols reads the .symtab of the file's separate debug file, if
// one is installed.
func (o *objFile) debugSymbols() []elf.Symbol {
	if o.debug == nil {
		return nil
	}
	var id []byte
	if s := o.f.Section(".note.gnu.build-id"); s != nil {
		if b, err := s.Data(); err == nil {
			id = buildID(b, o.f.ByteOrder)
		}
	}
	var link string
	var crc uint32
	if s := o.f.Section(".gnu_debuglink"); s != nil {
		if b, err := s.Data(); err == nil {
			if i := bytes.IndexByte(b, 0); i > 0 && len(b) >= 4 {
				link, crc = string(b[:i]), o.f.ByteOrder.Uint32(b[len(b)-4:])
			}
		}
	}
	if id == nil && link == "" {
		return nil
	}
	path := o.debug(id, link, crc)
	if path == "" {
		return nil
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	syms, _ := f.Symbols()
	return syms
}

// buildID returns the GNU build ID a .note.gnu.build-id section holds.
func buildID(note []byte, bo binary.ByteOrder) []byte {
	for len(note) >= 12 {
		namesz, descsz, typ := bo.Uint32(note), bo.Uint32(note[4:]), bo.Uint32(note[8:])
		name := 12 + (uint64(namesz)+3)&^3
		end := name + (uint64(descsz)+3)&^3
		if end > uint64(len(note)) || name-12 < uint64(namesz) {
			return nil
		}
		if typ == 3 && namesz == 4 && string(note[12:16]) == "GNU\x00" { // NT_GNU_BUILD_ID
			return note[name : name+uint64(descsz)]
		}
		note = note[end:]
	}
	return nil
}

// debugFinder returns the function that finds debug files under
// debugDir (/usr/lib/debug) for an object at path, seen from root (""
// or /proc/PID/root): by build ID, then as gdb finds a debuglink's
// file, beside the object, in its .debug directory, and under
// debugDir; a debuglink's file must have its CRC. Failing those, it
// asks fetch, if not nil, for the build ID's file.
func debugFinder(root, debugDir, path string, fetch func([]byte) string) func([]byte, string, uint32) string {
	return func(id []byte, link string, crc uint32) string {
		if p := findDebug(root, debugDir, path, id, link, crc); p != "" || fetch == nil || len(id) == 0 {
			return p
		}
		return fetch(id)
	}
}

// findDebug is debugFinder's search of the machine.
func findDebug(root, debugDir, path string, id []byte, link string, crc uint32) string {
	if len(id) >= 2 {
		h := hex.EncodeToString(id)
		p := filepath.Join(debugDir, ".build-id", h[:2], h[2:]+".debug")
		for _, q := range []string{filepath.Join(root, p), p} {
			if _, err := os.Stat(q); err == nil {
				return q
			}
		}
	}
	if link == "" {
		return ""
	}
	dir := filepath.Dir(path)
	for _, p := range []string{filepath.Join(dir, link), filepath.Join(dir, ".debug", link), filepath.Join(debugDir, dir, link)} {
		for _, q := range []string{filepath.Join(root, p), p} {
			if fileCRC(q) == crc {
				return q
			}
		}
	}
	return ""
}

// fileCRC returns the CRC-32 of the file at path, or 0 when it cannot
// be read.
func fileCRC(path string) uint32 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, f); err != nil {
		return 0
	}
	return h.Sum32()
}

// loadBias returns the load bias of the file's load made of maps: the
// difference between its addresses in the process and in the file. A
// mapping's address and offset give it, from the PT_LOAD segment
// holding that offset; segments may share a page of the file, so each
// mapping votes for the bias of every segment that may hold it, and
// the most voted wins.
func (o *objFile) loadBias(maps []Mapping) (uint64, bool) {
	var best uint64
	votes := map[uint64]int{}
	for _, m := range maps {
		for _, p := range o.loads {
			if m.Offset < p.Off&^(pageSize-1) || m.Offset >= p.Off+max(p.Filesz, 1) {
				continue
			}
			b := m.Start - (p.Vaddr - p.Off + m.Offset)
			votes[b]++
			if votes[b] > votes[best] {
				best = b
			}
		}
	}
	return best, votes[best] > 0
}

// extent returns the memory the file's segments take when loaded with
// bias.
func (o *objFile) extent(bias uint64) (start, end uint64, ok bool) {
	for i, p := range o.loads {
		lo, hi := p.Vaddr&^(pageSize-1), p.Vaddr+p.Memsz
		if i == 0 || lo < start {
			start = lo
		}
		end = max(end, hi)
	}
	return start + bias, end + bias, len(o.loads) > 0
}

// lookup returns the symbol holding ELF address v: of .dynsym first,
// then of .symtab, as libproc's proc_addr2sym looks. .symtab, often
// the larger (and for a stripped library, a debug file's), is read
// only when .dynsym has no symbol there.
func (o *objFile) lookup(v uint64) (fsym, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.readDyn()
	if s, ok := o.dyn.lookup(v); ok {
		return s, true
	}
	o.readSym()
	return o.sym.lookup(v)
}

// A symtab is a symbol table sorted for lookups by address.
type symtab struct {
	syms []fsym // by value; of one value, the preferred last
	// reach[i] is the highest end of syms[:i+1]: a lookup walks back
	// only while an earlier symbol may still hold the address.
	reach []uint64
}

type fsym struct {
	name        string
	value, size uint64
	local       bool
}

func newSymtab(syms []elf.Symbol) symtab {
	var t symtab
	for _, s := range syms {
		if s.Size == 0 || s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE || s.Name == "" {
			continue
		}
		switch elf.ST_TYPE(s.Info) {
		case elf.STT_FUNC, elf.STT_OBJECT, elf.STT_GNU_IFUNC, elf.STT_NOTYPE:
			t.syms = append(t.syms, fsym{name: s.Name, value: s.Value, size: s.Size, local: elf.ST_BIND(s.Info) == elf.STB_LOCAL})
		}
	}
	slices.SortFunc(t.syms, func(a, b fsym) int {
		if c := cmp.Compare(a.value, b.value); c != 0 {
			return c
		}
		return userPref(a, b)
	})
	t.reach = make([]uint64, len(t.syms))
	var r uint64
	for i, s := range t.syms {
		r = max(r, s.value+s.size)
		t.reach[i] = r
	}
	return t
}

// userPref orders the symbols of one address, the preferred last, as
// libproc's symvalcmp: a global over a local, a name without a leading
// '$' over one with, fewer leading underscores over more; then, for a
// stable order, the first name in byte order.
func userPref(a, b fsym) int {
	if a.local != b.local {
		if a.local {
			return -1
		}
		return 1
	}
	if ad, bd := strings.HasPrefix(a.name, "$"), strings.HasPrefix(b.name, "$"); ad != bd {
		if ad {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(underscores(b.name), underscores(a.name)); c != 0 {
		return c
	}
	return strings.Compare(b.name, a.name)
}

// lookup returns the symbol holding v: of those that do, the one
// starting last, and of those the preferred.
func (t *symtab) lookup(v uint64) (fsym, bool) {
	i := sort.Search(len(t.syms), func(i int) bool { return t.syms[i].value > v })
	for i--; i >= 0 && t.reach[i] > v; i-- {
		if s := t.syms[i]; v-s.value < s.size {
			return s, true
		}
	}
	return fsym{}, false
}
