package debuginfo

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/kdtrace/kdtrace/internal/cachedir"
	"github.com/kdtrace/kdtrace/internal/cachefile"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/index"
	"github.com/kdtrace/kdtrace/internal/mmap"
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
		sum := sha256.Sum256([]byte(cachefile.FromRoot(abs, abs)))
		key = "path-" + hex.EncodeToString(sum[:16])
	}
	return key + ".idx"
}

// headerFor describes the current inputs of img. Paths are made absolute
// so that a cache written from one directory is valid from another, and
// those inside the image's process root are recorded from that root
// (cachefile.FromRoot), so that the next process of the same program
// finds the cache current.
func headerFor(img *Image, ef *elffile.File) (index.Header, error) {
	imagePath, err := filepath.Abs(img.Path)
	if err != nil {
		return index.Header{}, err
	}
	debugPath, err := filepath.Abs(img.DebugPath)
	if err != nil {
		return index.Header{}, err
	}
	h := index.Header{
		ImagePath: cachefile.FromRoot(imagePath, imagePath), BuildID: img.BuildID, DebugPath: cachefile.FromRoot(debugPath, imagePath), Source: img.Source,
		ImageSize: uint64(ef.Size), ImageMtime: ef.Mtime.UnixNano(),
	}
	st, err := os.Stat(debugPath)
	if err != nil {
		return h, err
	}
	h.DebugSize, h.DebugMtime = uint64(st.Size()), st.ModTime().UnixNano()
	return h, nil
}

// storeCache writes a serialised index to the cache, if there is one.
func storeCache(img *Image, data []byte, opts *Options) error {
	if dir := opts.cache(); dir != nil {
		return cachefile.StoreFile(dir, cacheName(img), data)
	}
	return nil
}

// errPartial is why loadCache passes over a partial index when a whole
// one is wanted.
var errPartial = errors.New("partial index cache")

// loadCache returns the cached index of the image if it is current,
// and the mapping it lives in. A problem with the cache is not an error:
// the index is rebuilt.
func loadCache(img *Image, ef *elffile.File, opts *Options) (x *index.Index, mapped []byte, ok bool) {
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
	h, stats, x, err := index.Decode(data)
	if err == nil {
		abs, _ := filepath.Abs(img.Path)
		img.DebugPath, img.Source = cachefile.InRoot(h.DebugPath, abs), h.Source
		if abs == img.DebugPath {
			img.DebugPath = img.Path // embedded DWARF: keep the name given
		}
		// Inputs that changed or went away make the cache stale.
		if cur, herr := headerFor(img, ef); herr != nil || cur != h {
			err = index.ErrStale
		} else if x.Partial && !opts.Lazy {
			err = errPartial // the whole index is wanted: build it
		}
	}
	if err != nil {
		mmap.Unmap(mapped)
		img.DebugPath, img.Source = "", ""
		if !errors.Is(err, index.ErrOldVersion) && !errors.Is(err, index.ErrStale) && err != errPartial {
			opts.warn(Warning{Image: img.Path, Err: fmt.Errorf("ignoring index cache %s: %w", f.Name(), err)})
		}
		return nil, nil, false
	}
	img.Stats = buildStats(stats)
	cachefile.Used(dir, name, st.ModTime(), time.Now())
	return x, mapped, true
}
