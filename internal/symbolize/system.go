package symbolize

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/ksym"
)

// RefreshInterval is how often, at most, a live process's maps are read
// again for an address in none of its objects.
const RefreshInterval = 100 * time.Millisecond

// Config says where System finds the live system's files. The zero
// Config reads /proc and /usr/lib/debug.
type Config struct {
	Proc     string // procfs; "/proc" when ""
	DebugDir string // separate debug files; "/usr/lib/debug" when ""
	// Kallsyms returns the running kernel's symbol table; nil reads
	// Proc/kallsyms. A caller that has read kallsyms already (a
	// ksym.Resolver's Table) passes it so that the file is read once;
	// a table read from a kernel image holds the image's addresses,
	// not the running kernel's, and finds nothing right.
	Kallsyms func() (*ksym.Table, error)
	// Debuginfod returns the path of the debug file of a build-id
	// that the machine lacks, fetched from debuginfod servers, or ""
	// for none; nil asks nowhere.
	Debuginfod func(buildID []byte) string
	// MaxOpenFiles is how many files, at most, are held open to read
	// their symbols when first needed (256 when 0): past it, the
	// oldest are read at once and closed.
	MaxOpenFiles int
}

// System looks up addresses of the running kernel and of processes. It
// implements consumer.Symbols, and may be used from several
// goroutines.
type System struct {
	cfg Config

	kernOnce sync.Once
	kern     *Kernel
	kernErr  error

	mu    sync.Mutex
	procs map[int]*process
	files map[fileKey]*objFile
	open  []*objFile // the files opened, oldest first, not yet read
}

var _ consumer.Symbols = (*System)(nil)

// New returns a System reading what cfg names. Nothing is read until
// an address is looked up or a process grabbed.
func New(cfg Config) *System {
	if cfg.Proc == "" {
		cfg.Proc = "/proc"
	}
	if cfg.DebugDir == "" {
		cfg.DebugDir = "/usr/lib/debug"
	}
	if cfg.MaxOpenFiles <= 0 {
		cfg.MaxOpenFiles = 256
	}
	return &System{cfg: cfg, procs: map[int]*process{}, files: map[fileKey]*objFile{}}
}

// KernelTable returns the kernel's addresses, reading kallsyms (and
// /proc/modules, where there is one) on first use.
func (s *System) KernelTable() (*Kernel, error) {
	s.kernOnce.Do(func() {
		load := s.cfg.Kallsyms
		if load == nil {
			load = func() (*ksym.Table, error) { return ksym.Kallsyms(filepath.Join(s.cfg.Proc, "kallsyms"), "") }
		}
		t, err := load()
		if err != nil {
			s.kernErr = err
			return
		}
		var mods []Module
		if b, err := os.ReadFile(filepath.Join(s.cfg.Proc, "modules")); err == nil {
			mods, _ = ReadModules(b)
		}
		s.kern = NewKernel(t, mods)
	})
	return s.kern, s.kernErr
}

// Kernel looks up a kernel address (dtrace_lookup_by_addr).
func (s *System) Kernel(addr uint64) (consumer.Symbol, bool) {
	k, err := s.KernelTable()
	if err != nil {
		return consumer.Symbol{}, false
	}
	return k.Lookup(addr)
}

// User looks up an address of process pid (Plookup_by_addr, Pobjname),
// reading its maps if it was not grabbed.
func (s *System) User(pid, addr uint64) (consumer.Symbol, bool) {
	if pid == 0 || pid > math.MaxInt32 {
		return consumer.Symbol{}, false
	}
	p := s.process(int(pid))
	if p == nil {
		return consumer.Symbol{}, false
	}
	if sym, ok := p.lookup(addr); ok {
		return sym, true
	}
	if p = s.refresh(int(pid), p); p != nil {
		return p.lookup(addr)
	}
	return consumer.Symbol{}, false
}

// Grab reads process pid's maps and opens the files it maps, so that
// its addresses can be looked up after it has exited. A backend calls
// it when it first sees a record of the process; grabbing it again
// reads its maps again.
func (s *System) Grab(pid int) error {
	p, err := s.read(pid)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.replace(pid, p)
	s.mu.Unlock()
	return nil
}

// replace makes p what is known of pid, unless p maps nothing and
// what was known maps something: the maps of a process that has
// exited but not been reaped are empty. The caller holds s.mu.
func (s *System) replace(pid int, p *process) *process {
	if old := s.procs[pid]; old != nil && len(p.objs) == 0 && len(old.objs) > 0 {
		return old
	}
	s.procs[pid] = p
	return p
}

// Close closes the files whose symbols were never read. Lookups after
// Close find only what was read before.
func (s *System) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.files {
		if f != nil {
			f.close()
		}
	}
	s.open = nil
	return nil
}

// process returns what is known of pid, reading its maps if nothing is.
func (s *System) process(pid int) *process {
	s.mu.Lock()
	p := s.procs[pid]
	s.mu.Unlock()
	if p != nil {
		return p
	}
	p, err := s.read(pid)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.procs[pid]; q != nil {
		return q
	}
	s.procs[pid] = p
	return p
}

// refresh reads pid's maps again unless p was read less than
// RefreshInterval ago; it returns nil when nothing new was read.
func (s *System) refresh(pid int, p *process) *process {
	s.mu.Lock()
	stale := time.Since(p.read) >= RefreshInterval
	if stale {
		// Whatever comes of it, not asked for again before the
		// interval: a gone process's maps, read while it lived, stand.
		p.read = time.Now()
	}
	s.mu.Unlock()
	if !stale {
		return nil
	}
	q, err := s.read(pid)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replace(pid, q) != q {
		return nil
	}
	return q
}

// read reads pid's maps and opens the objects' files.
func (s *System) read(pid int) (*process, error) {
	dir := filepath.Join(s.cfg.Proc, strconv.Itoa(pid))
	data, err := os.ReadFile(filepath.Join(dir, "maps"))
	if err != nil {
		return nil, err
	}
	maps, err := ParseMaps(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, "maps"), err)
	}
	p := &process{read: time.Now()}
	for _, g := range group(maps) {
		var f *objFile
		if g[0].Path == "[vdso]" {
			f = s.vdso(dir, g[0])
		} else {
			f = s.file(dir, g[0])
		}
		p.objs = append(p.objs, newObject(g, f))
	}
	slices.SortStableFunc(p.objs, func(a, b object) int { return cmp.Compare(a.start, b.start) })
	return p, nil
}

// file returns the ELF file m maps in the process whose /proc
// directory is dir, opened once for all processes; nil when it cannot
// be read. The very file mapped is reached through map_files (even if
// deleted, or in another mount namespace); else through the process's
// root directory; else by its path.
func (s *System) file(dir string, m Mapping) *objFile {
	root := filepath.Join(dir, "root")
	for _, name := range []string{
		filepath.Join(dir, "map_files", fmt.Sprintf("%x-%x", m.Start, m.End)),
		filepath.Join(root, m.Path),
		m.Path,
	} {
		fi, err := os.Stat(name)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		key := fileKey{m.Dev, m.Inode, fi.Size(), fi.ModTime().UnixNano()}
		s.mu.Lock()
		f, ok := s.files[key]
		s.mu.Unlock()
		if ok {
			return f
		}
		f, err = openObjFile(name)
		if err != nil {
			if errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
				continue
			}
			f = nil // no ELF: the object is known by name only
		} else {
			f.debug = debugFinder(root, s.cfg.DebugDir, m.Path, s.cfg.Debuginfod)
		}
		return s.keep(key, f)
	}
	return nil
}

// vdso returns the vDSO the process maps at m, read from its memory;
// every process of a kernel maps the same image, read once.
func (s *System) vdso(dir string, m Mapping) *objFile {
	mem, err := os.Open(filepath.Join(dir, "mem"))
	if err != nil {
		return nil
	}
	defer mem.Close()
	img := make([]byte, m.End-m.Start)
	if _, err := mem.ReadAt(img, int64(m.Start)); err != nil {
		return nil
	}
	h := fnv.New64a()
	h.Write(img)
	key := fileKey{dev: m.Path, inode: h.Sum64(), size: int64(len(img))}
	s.mu.Lock()
	f, ok := s.files[key]
	s.mu.Unlock()
	if ok {
		return f
	}
	f, err = newObjFile(bytes.NewReader(img), nil)
	if err != nil {
		f = nil
	}
	return s.keep(key, f)
}

// keep caches f under key, unless another goroutine did first.
func (s *System) keep(key fileKey, f *objFile) *objFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.files[key]; ok {
		if f != nil {
			f.close()
		}
		return g
	}
	s.files[key] = f
	if f != nil && f.closer != nil {
		// Too many files held open: the oldest are read now and
		// closed.
		s.open = append(s.open, f)
		for len(s.open) > s.cfg.MaxOpenFiles {
			s.open[0].readAll()
			s.open = s.open[1:]
		}
	}
	return f
}
