package debuginfo

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kdtrace/kdtrace/debuginfo/internal/cachefile"
	"github.com/kdtrace/kdtrace/debuginfo/internal/elffile"
	"github.com/kdtrace/kdtrace/internal/cachedir"
	"github.com/kdtrace/kdtrace/internal/mmap"
)

// The cache holds one file per image, named by its build-id (or, without
// one, by a hash of its path). The format is ours:
//
//	magic "KDTRIDX\n", version uint32
//	what the index was built from: image path, size, mtime, build-id;
//	debug file path, size, mtime; source; build statistics
//	the index tables, each a count then fixed-size records
//	CRC32-C of all the bytes before it
//
// Integers are little-endian; strings are a uint32 length then bytes.
// A file whose magic, version, checksum or inputs differ is ignored and
// rebuilt.
const (
	cacheMagic   = "KDTRIDX\n"
	cacheVersion = 4
)

// warnFunc returns Warn as a function of an error, or nil.
func (o *Options) warnFunc() func(error) {
	if o.Warn == nil {
		return nil
	}
	return func(err error) { o.Warn(Warning{Err: err}) }
}

// cache returns the cache directory, or nil if there is none to use; a
// directory refused is reported once, through Warn.
func (o *Options) cache() *cachedir.Dir {
	return cachefile.Open(o.CacheDir, o.NoCache, o.warnFunc())
}

// cacheName returns the name of the image's index in the cache.
func cacheName(img *Image) string {
	key := img.BuildID
	if key == "" {
		abs, _ := filepath.Abs(img.Path)
		sum := sha256.Sum256([]byte(abs))
		key = "path-" + hex.EncodeToString(sum[:16])
	}
	return key + ".idx"
}

// cacheHeader identifies the inputs of a cached index.
type cacheHeader struct {
	imagePath, buildID, debugPath, source string
	imageSize, debugSize                  uint64
	imageMtime, debugMtime                int64
}

// headerFor describes the current inputs of img. Paths are made absolute
// so that a cache written from one directory is valid from another.
func headerFor(img *Image, ef *elffile.File) (cacheHeader, error) {
	imagePath, err := filepath.Abs(img.Path)
	if err != nil {
		return cacheHeader{}, err
	}
	debugPath, err := filepath.Abs(img.DebugPath)
	if err != nil {
		return cacheHeader{}, err
	}
	h := cacheHeader{
		imagePath: imagePath, buildID: img.BuildID, debugPath: debugPath, source: img.Source,
		imageSize: uint64(ef.Size), imageMtime: ef.Mtime.UnixNano(),
	}
	st, err := os.Stat(debugPath)
	if err != nil {
		return h, err
	}
	h.debugSize, h.debugMtime = uint64(st.Size()), st.ModTime().UnixNano()
	return h, nil
}

// storeCache writes a serialised index to the cache, if there is one.
func storeCache(img *Image, data []byte, opts *Options) error {
	if dir := opts.cache(); dir != nil {
		return cachefile.StoreFile(dir, cacheName(img), data)
	}
	return nil
}

// loadCache returns the cached index of the image if it is current,
// and the mapping it lives in. A problem with the cache is not an error:
// the index is rebuilt.
func loadCache(img *Image, ef *elffile.File, opts *Options) (x *index, mapped []byte, ok bool) {
	dir := opts.cache()
	if dir == nil {
		return nil, nil, false
	}
	name := cacheName(img)
	f, err := dir.Open(name)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, false
	}
	data, err := mmap.Map(f, st.Size())
	if err != nil || data == nil {
		mapped = nil
		data = make([]byte, st.Size())
		if _, err := io.ReadFull(f, data); err != nil {
			return nil, nil, false
		}
	} else {
		mapped = data
	}
	h, stats, x, err := decodeIndex(data)
	if err == nil {
		img.DebugPath, img.Source = h.debugPath, h.source
		if abs, _ := filepath.Abs(img.Path); abs == h.debugPath {
			img.DebugPath = img.Path // embedded DWARF: keep the name given
		}
		// Inputs that changed or went away make the cache stale.
		if cur, herr := headerFor(img, ef); herr != nil || cur != h {
			err = errStale
		}
	}
	if err != nil {
		mmap.Unmap(mapped)
		img.DebugPath, img.Source = "", ""
		if !errors.Is(err, errOldVersion) && !errors.Is(err, errStale) {
			opts.warn(Warning{Image: img.Path, Err: fmt.Errorf("ignoring index cache %s: %w", f.Name(), err)})
		}
		return nil, nil, false
	}
	img.Stats = stats
	cachefile.Used(dir, name, st.ModTime(), time.Now())
	return x, mapped, true
}

var errStale = errors.New("index cache of other inputs")

var errOldVersion = errors.New("index cache of another version")

// encodeIndex serialises an index. The tables are 8-byte counts then
// records; decodeIndex reads them in place.
func encodeIndex(h cacheHeader, st BuildStats, t *tables) []byte {
	nstr := 0
	for _, s := range t.strs {
		nstr += len(s)
	}
	size := 256 + len(h.imagePath) + len(h.debugPath) + nstr + strOffSize*(len(t.strs)+1) +
		symbolSize*(len(t.syms)+len(t.thunkSyms)) + byNameSize*len(t.byName) +
		functionSize*len(t.funcs) + copySize*len(t.copies) + rangeSize*len(t.ranges)
	e := cachefile.Encoder{B: make([]byte, 0, size)}
	e.B = append(e.B, cacheMagic...)
	e.U32(cacheVersion)
	e.Str(h.imagePath)
	e.U64(h.imageSize)
	e.U64(uint64(h.imageMtime))
	e.Str(h.buildID)
	e.Str(h.debugPath)
	e.U64(h.debugSize)
	e.U64(uint64(h.debugMtime))
	e.Str(h.source)
	for _, v := range []int{st.Units, st.Subprograms, st.Copies, st.Unresolved, st.Nested} {
		e.U64(uint64(v))
	}
	e.U64(uint64(nstr))
	for _, s := range t.strs {
		e.B = append(e.B, s...)
	}
	e.U64(uint64(len(t.strs) + 1))
	off := uint32(0)
	for _, s := range t.strs {
		e.U32(off)
		off += uint32(len(s))
	}
	e.U32(off)
	symbols := func(ss []symbol) {
		e.U64(uint64(len(ss)))
		for _, s := range ss {
			e.U32(s.name)
			e.U64(s.addr)
			e.U64(s.size)
		}
	}
	symbols(t.syms)
	symbols(t.thunkSyms)
	e.U64(uint64(len(t.byName)))
	for _, v := range t.byName {
		e.U32(v)
	}
	e.U64(uint64(len(t.funcs)))
	for _, f := range t.funcs {
		e.U32(f.name)
		e.U8(f.flags)
		e.U32(f.copies)
		e.U32(f.n)
	}
	e.U64(uint64(len(t.copies)))
	for _, c := range t.copies {
		e.U32(c.sym)
		e.U8(c.flags)
		e.U32(c.line)
		e.U32(c.file)
		e.U64(c.entry)
		e.U32(c.ranges)
		e.U32(c.n)
		e.U32(c.view)
		e.U32(c.stmt)
	}
	e.U64(uint64(len(t.ranges)))
	for _, r := range t.ranges {
		e.U64(r.Lo)
		e.U64(r.Hi)
	}
	e.U32(crc32.Checksum(e.B, cachefile.Castagnoli()))
	return e.B
}

// decodeIndex checks a serialised index and returns a view of it, which
// refers to data.
func decodeIndex(data []byte) (h cacheHeader, st BuildStats, x *index, err error) {
	if len(data) < len(cacheMagic)+8 || string(data[:len(cacheMagic)]) != cacheMagic {
		return h, st, nil, errors.New("bad magic")
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, cachefile.Castagnoli()) != binary.LittleEndian.Uint32(data[len(body):]) {
		return h, st, nil, errors.New("checksum mismatch")
	}
	d := cachefile.Decoder{B: body[len(cacheMagic):]}
	if d.U32() != cacheVersion {
		return h, st, nil, errOldVersion
	}
	h.imagePath = d.Str()
	h.imageSize = d.U64()
	h.imageMtime = int64(d.U64())
	h.buildID = d.Str()
	h.debugPath = d.Str()
	h.debugSize = d.U64()
	h.debugMtime = int64(d.U64())
	h.source = d.Str()
	st.Units, st.Subprograms, st.Copies, st.Unresolved, st.Nested = int(d.U64()), int(d.U64()), int(d.U64()), int(d.U64()), int(d.U64())
	x = new(index)
	x.strs = d.Take(d.U64())
	x.strOff = d.Table(strOffSize)
	x.syms = d.Table(symbolSize)
	x.thunkSyms = d.Table(symbolSize)
	x.byName = d.Table(byNameSize)
	x.funcs = d.Table(functionSize)
	x.copies = d.Table(copySize)
	x.ranges = d.Table(rangeSize)
	if d.Bad || len(d.B) != 0 || x.strOff.Len() == 0 || cachefile.U32(x.strOff.Rec(x.strOff.Len()-1)) != uint32(len(x.strs)) {
		return h, st, nil, errors.New("truncated or malformed")
	}
	return h, st, x, nil
}
