package debuginfo

import (
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/index"
	"github.com/kdtrace/kdtrace/internal/debuginfod"
	"github.com/kdtrace/kdtrace/internal/mmap"

	"context"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// defaultDebugRoot is where distributions install separate debug files.
const defaultDebugRoot = "/usr/lib/debug"

// Options configure how images are opened and indexed.
type Options struct {
	// DebugRoot is the root of the separate debug files; empty means
	// DefaultDebugRoot.
	DebugRoot string
	// CacheDir holds the index cache; empty means kdtrace under
	// os.UserCacheDir. A directory that another user could change, or
	// that lies under one, is not used (see internal/cachedir): that
	// is reported once, as a Warning, and the work goes on without.
	CacheDir string
	// NoCache disables reading and writing the cache.
	NoCache bool
	// Warn receives problems that do not stop the work, such as a
	// debug file that does not match its image. Nil drops them.
	Warn func(Warning)
	// Workers is the number of goroutines scanning DWARF; 0 means
	// GOMAXPROCS.
	Workers int
	// Lazy defers the index of an image the cache has none of: each
	// Lookup of a function the index does not cover yet reads only the
	// units that can hold it (see the package documentation), and the
	// whole index is built when a question needs every function
	// (InlinedFunctions). A partial index in the cache is used for the
	// functions it covers; without Lazy, OpenImage builds and caches the
	// whole index instead.
	Lazy bool
	// Debuginfod, if not nil, fetches by build-id from debuginfod
	// servers the debug files found nowhere else on the machine.
	Debuginfod *debuginfod.Client
	// Context bounds Debuginfod's downloads: cancelling it stops them.
	// Nil means context.Background().
	Context context.Context
}

// Options returns the options the image was opened with.
func (img *Image) Options() Options { return img.opts }

func (o *Options) debugRoot() string {
	if o.DebugRoot == "" {
		return defaultDebugRoot
	}
	return o.DebugRoot
}

func (o *Options) warn(w Warning) {
	if o.Warn != nil {
		o.Warn(w)
	}
}

// Warning is a problem with one image that did not stop the others,
// or with the cache, which is then not used.
type Warning struct {
	Image     string // the image concerned, if any
	DebugFile string // the debug file concerned, if any
	Err       error
}

func (w Warning) Error() string {
	switch {
	case w.DebugFile != "":
		return fmt.Sprintf("%s (debug file %s): %v", w.Image, w.DebugFile, w.Err)
	case w.Image == "":
		return w.Err.Error()
	}
	return fmt.Sprintf("%s: %v", w.Image, w.Err)
}

func (w Warning) Unwrap() error { return w.Err }

// Where an image's DWARF was found.
const (
	sourceImage      = "image"      // in the image itself
	sourceBuildID    = "build-id"   // <debug-root>/.build-id/xx/rest.debug
	SourceDebugLink  = "debuglink"  // the name in .gnu_debuglink, CRC checked
	sourcePath       = "path"       // <debug-root>/<image path>.debug (FreeBSD)
	sourceKernel     = "kernel"     // a distribution's kernel debug layout
	sourceDebuginfod = "debuginfod" // fetched into the debuginfod cache
)

// buildStats counts what an index build saw.
type buildStats struct {
	Units       int // compile and partial units scanned
	Walked      int // of those, units whose DIEs were all read
	Subprograms int // subprogram DIEs kept for name resolution
	Copies      int // inlined copies with code
	Unresolved  int // copies whose abstract origin has no name (e.g. in a DWZ file)
	Nested      int // copies left out for lying in an instance of the same function
}

// Image is one ELF file (a kernel, a module, a program) and its index.
type Image struct {
	Module    string // "kernel", or the module's name
	Path      string // the image
	DebugPath string // the file the DWARF came from; Path if embedded
	Source    string // how DebugPath was found: one of the Source constants
	BuildID   string // hex, or "" if the image has none
	Cached    bool   // the index came from the cache
	// Stats are those of the last index built or read from the cache.
	Stats buildStats

	// idxMu guards the indexes: x is the first (nil until a lazy image
	// is first asked), parts those built later for functions x does not
	// cover. Every index holds all the symbols.
	idxMu  sync.Mutex
	x      *index.Index
	parts  []*index.Index
	mapped []byte // the cache file x lives in, if mapped
	// dbg is the debug file of a lazy image, open for the indexes built
	// on demand; dwarf its sections.
	dbg   *elffile.File
	dwarf *dwarfread.DwarfSections

	opts Options // for Types: where to cache its tables

	mu  sync.Mutex
	elf *elffile.File // for Code; reopened on use after Close

	// The debug file's line programs, for EntryMarkers.
	lineELF *elffile.File
	lineSec []byte
	lines   map[uint32][]dwarfread.LineRow
}

// MismatchError reports a debug file that does not belong to its image.
type MismatchError struct {
	Image, DebugFile string
	Reason           string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("debug file %s does not match %s: %s", e.DebugFile, e.Image, e.Reason)
}

// NotFoundError reports an image without debug information.
type NotFoundError struct {
	Image  string
	Looked []string // each place looked, with what was wrong there
	// Debuginfod is why the debuginfod servers did not give it, if
	// they were asked.
	Debuginfod error
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("no debug info for %s: looked in %s", e.Image, strings.Join(e.Looked, ", "))
}

// OpenImage opens the ELF file at path, finds its DWARF and loads its
// index, from the cache when it is current. The module name is the file
// name without .ko or .debug suffixes.
func OpenImage(path string, opts Options) (*Image, error) {
	return openImage(moduleName(path), path, nil, opts)
}

func moduleName(path string) string {
	name := filepath.Base(path)
	for _, suf := range []string{".debug", ".xz", ".zst", ".gz", ".ko", ".o"} {
		name = strings.TrimSuffix(name, suf)
	}
	return name
}

// openImage is OpenImage with more places to look for the debug file,
// tried after the standard ones (the kernel layouts of distributions).
func openImage(module, path string, extra []string, opts Options) (*Image, error) {
	ef, err := elffile.Open(path)
	if err != nil {
		return nil, err
	}
	img := &Image{Module: module, Path: path, BuildID: ef.BuildID(), elf: ef, opts: opts}
	if !opts.NoCache {
		if x, mapped, ok := loadCache(img, ef, &opts); ok {
			img.x, img.mapped, img.Cached = x, mapped, true
			return img, nil
		}
	}
	if opts.Lazy {
		dbg, err := locate(img, ef, extra, &opts)
		if err != nil {
			ef.Close()
			return nil, err
		}
		img.dbg = dbg
		return img, nil
	}
	if err := img.build(ef, extra, &opts); err != nil {
		ef.Close()
		return nil, err
	}
	return img, nil
}

// build finds the image's DWARF, indexes it and stores the index in the
// cache.
func (img *Image) build(ef *elffile.File, extra []string, opts *Options) error {
	dbg, err := locate(img, ef, extra, opts)
	if err != nil {
		return err
	}
	if dbg != ef {
		defer dbg.Close()
	}
	img.x, _, err = img.makeIndex(ef, dbg, nil, nil, opts)
	return err
}

// makeIndex indexes dbg, the debug file of the image ef: wholly when
// names is nil, else the part answering for the functions names
// (index.BuildFor), which may turn out to be whole. A partial index
// also takes in the functions of the partial indexes olds, if it can
// take them all (merged). It stores the index in the cache, unless it
// covers no function.
func (img *Image) makeIndex(ef, dbg *elffile.File, names []string, olds []*index.Index, opts *Options) (x *index.Index, merged bool, err error) {
	symf := ef
	if ef.F.Section(".symtab") == nil {
		symf = dbg // a stripped image: the debug file kept the symbols
	}
	d := img.dwarf
	if d == nil {
		var err error
		if d, err = dbg.Dwarf(); err != nil {
			return nil, false, fmt.Errorf("reading DWARF of %s: %w", img.DebugPath, err)
		}
		if img.dbg != nil {
			img.dwarf = d // a lazy image reads it again
		}
	}
	var t *index.Tables
	var stats index.Stats
	if names == nil {
		t, stats, err = index.Build(d, symf, opts.Workers, isThunk)
	} else {
		t, stats, err = index.BuildFor(d, symf, opts.Workers, isThunk, names)
	}
	if err != nil {
		return nil, false, fmt.Errorf("indexing %s: %w", img.DebugPath, err)
	}
	merged = len(olds) > 0
	for _, old := range olds {
		merged = t.Merge(old) && merged
	}
	h, err := headerFor(img, ef)
	if err != nil {
		return nil, false, err
	}
	data := index.Encode(h, stats, t)
	if _, _, x, err = index.Decode(data); err != nil {
		return nil, false, fmt.Errorf("indexing %s: %w", img.DebugPath, err) // a bug of ours
	}
	img.Stats = buildStats(stats)
	if !opts.NoCache && (names == nil || len(names) > 0) {
		if err := storeCache(img, data, opts); err != nil {
			opts.warn(Warning{Image: img.Path, Err: fmt.Errorf("writing index cache: %w", err)})
		}
	}
	return x, merged, nil
}

// symbols returns an index of the image for its symbols: any of its
// indexes, or for a lazy image not asked yet, one covering no function.
func (img *Image) symbols() (*index.Index, error) {
	img.idxMu.Lock()
	defer img.idxMu.Unlock()
	if img.x == nil {
		return img.extend([]string{})
	}
	return img.x, nil
}

// indexFor returns an index of the image that answers for the function
// name, building the part of it that does when none does yet.
func (img *Image) indexFor(name string) (*index.Index, error) {
	img.idxMu.Lock()
	defer img.idxMu.Unlock()
	if img.x != nil && img.x.Covers(name) {
		return img.x, nil
	}
	for _, x := range img.parts {
		if x.Covers(name) {
			return x, nil
		}
	}
	return img.extend([]string{name})
}

// whole returns the whole index of the image, building it if only
// parts were built.
func (img *Image) whole() (*index.Index, error) {
	img.idxMu.Lock()
	defer img.idxMu.Unlock()
	if img.x != nil && !img.x.Partial {
		return img.x, nil
	}
	return img.extend(nil)
}

// extend builds an index of the image for names (nil: the whole index)
// and keeps it; idxMu is held. A partial index takes in the functions
// of those built before it, so that the one cached answers for them
// too, and replaces them when it took them all. An index replaced
// stays mapped until Close, for callers may still read it.
func (img *Image) extend(names []string) (*index.Index, error) {
	if err := img.openDebug(); err != nil {
		return nil, err
	}
	var olds []*index.Index
	if names != nil {
		if img.x != nil {
			olds = append(olds, img.x)
		}
		olds = append(olds, img.parts...)
	}
	x, merged, err := img.makeIndex(img.elf, img.dbg, names, olds, &img.opts)
	if err != nil {
		return nil, err
	}
	if img.x == nil || !x.Partial || merged {
		img.x, img.parts = x, nil
	} else {
		img.parts = append(img.parts, x)
	}
	return x, nil
}

// openDebug opens the image and its debug file for an index built after
// OpenImage, as for a lazy image whose cached index is partial.
func (img *Image) openDebug() error {
	img.mu.Lock()
	defer img.mu.Unlock()
	if err := img.openELF(); err != nil {
		return err
	}
	if img.dbg != nil {
		return nil
	}
	if img.DebugPath == img.Path {
		img.dbg = img.elf
		return nil
	}
	dbg, err := elffile.Open(img.DebugPath)
	if err != nil {
		return fmt.Errorf("debug file of %s: %w", img.Path, err)
	}
	img.dbg = dbg
	return nil
}

// locate finds the file holding the image's DWARF and opens it: the
// image itself, the build-id path, the .gnu_debuglink name (in the
// image's directory, its .debug subdirectory, and under the debug root),
// FreeBSD's <root>/<path>.debug, then the extra paths. A candidate that
// exists but does not match the image stops the search with a
// MismatchError, also reported as a warning: using a nearby file
// instead would make the results silently wrong.
func locate(img *Image, ef *elffile.File, extra []string, opts *Options) (*elffile.File, error) {
	if ef.HasDWARF() {
		img.DebugPath, img.Source = img.Path, sourceImage
		return ef, nil
	}
	root := opts.debugRoot()
	looked := []string{img.Path + " (no DWARF)"}
	abs, err := filepath.Abs(img.Path)
	if err != nil {
		abs = img.Path
	}
	dir := filepath.Dir(abs)
	link, crc, hasLink := ef.DebugLink()

	type candidate struct {
		path, source string
		checkCRC     bool
	}
	var cands []candidate
	if id := img.BuildID; len(id) > 2 {
		cands = append(cands, candidate{filepath.Join(root, ".build-id", id[:2], id[2:]+".debug"), sourceBuildID, false})
	}
	if hasLink {
		for _, d := range []string{dir, filepath.Join(dir, ".debug"), filepath.Join(root, dir)} {
			cands = append(cands, candidate{filepath.Join(d, link), SourceDebugLink, true})
		}
	}
	cands = append(cands, candidate{filepath.Join(root, abs) + ".debug", sourcePath, hasLink})
	for _, p := range extra {
		cands = append(cands, candidate{p, sourceKernel, false})
	}

	seen := map[string]bool{}
	for _, c := range cands {
		if seen[c.path] || c.path == abs {
			continue
		}
		seen[c.path] = true
		if _, err := os.Stat(c.path); err != nil {
			looked = append(looked, c.path+" (missing)")
			continue
		}
		dbg, err := elffile.Open(c.path)
		if err != nil {
			looked = append(looked, fmt.Sprintf("%s (%v)", c.path, err))
			continue
		}
		reason := ""
		switch {
		case !dbg.HasDWARF():
			looked = append(looked, c.path+" (no DWARF)")
			dbg.Close()
			continue
		case img.BuildID != "" && dbg.BuildID() != "" && dbg.BuildID() != img.BuildID:
			reason = fmt.Sprintf("build-id %s, image has %s", dbg.BuildID(), img.BuildID)
		case c.checkCRC:
			got, err := fileCRC(dbg.Osf)
			if err != nil {
				reason = fmt.Sprintf("reading it: %v", err)
			} else if got != crc {
				reason = fmt.Sprintf(".gnu_debuglink CRC %08x, file has %08x", crc, got)
			}
		}
		if reason != "" {
			dbg.Close()
			err := &MismatchError{Image: img.Path, DebugFile: c.path, Reason: reason}
			opts.warn(Warning{Image: img.Path, DebugFile: c.path, Err: err})
			return nil, err
		}
		img.DebugPath, img.Source = c.path, c.source
		return dbg, nil
	}
	path, derr := opts.fetchDebug(img.BuildID)
	if path != "" {
		dbg, err := elffile.Open(path)
		switch {
		case err != nil:
			derr = fmt.Errorf("%s: %w", path, err)
		case !dbg.HasDWARF():
			dbg.Close()
			derr = fmt.Errorf("%s: no DWARF", path)
		default:
			img.DebugPath, img.Source = path, sourceDebuginfod
			return dbg, nil
		}
	}
	if derr != nil {
		looked = append(looked, derr.Error())
	}
	return nil, &NotFoundError{Image: img.Path, Looked: looked, Debuginfod: derr}
}

// fileCRC is the CRC32 (IEEE, as zlib's crc32) of a whole file, which is
// what .gnu_debuglink records.
func fileCRC(f *os.File) (uint32, error) {
	h := crc32.NewIEEE()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

// Close releases the image's files. The image must not be used after.
func (img *Image) Close() error {
	img.mu.Lock()
	defer img.mu.Unlock()
	img.idxMu.Lock()
	defer img.idxMu.Unlock()
	err := mmap.Unmap(img.mapped)
	img.mapped, img.x, img.parts = nil, nil, nil
	if img.dbg != nil && img.dbg != img.elf {
		if cerr := img.dbg.Close(); err == nil {
			err = cerr
		}
	}
	img.dbg, img.dwarf = nil, nil
	if img.lineELF != nil {
		if cerr := img.lineELF.Close(); err == nil {
			err = cerr
		}
		img.lineELF, img.lineSec, img.lines = nil, nil, nil
	}
	if img.elf != nil {
		if cerr := img.elf.Close(); err == nil {
			err = cerr
		}
		img.elf = nil
	}
	return err
}

// code returns the bytes of [addr, addr+size) of the image.
func (img *Image) code(addr, size uint64) ([]byte, error) {
	img.mu.Lock()
	defer img.mu.Unlock()
	if err := img.openELF(); err != nil {
		return nil, err
	}
	return img.elf.Code(addr, size)
}

// section returns the name of the image's section holding addr.
func (img *Image) section(addr uint64) (string, bool) {
	img.mu.Lock()
	defer img.mu.Unlock()
	if img.openELF() != nil {
		return "", false
	}
	return img.elf.Section(addr)
}

// openELF opens the image's file for its code, once; the index, read
// from the cache, needs none of it.
func (img *Image) openELF() error {
	if img.elf != nil {
		return nil
	}
	ef, err := elffile.Open(img.Path)
	if err != nil {
		return err
	}
	img.elf = ef
	return nil
}
