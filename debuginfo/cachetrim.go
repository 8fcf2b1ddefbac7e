package debuginfo

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The cache keeps an index for every image kdtrace has read: each
// program traced through the pid provider adds its own. As Go's build
// cache does, files not used for a while are removed, and a file's
// modification time, refreshed when it is used, says when it last was.
const (
	// cacheUnused is how long a cache file may go unused before a
	// trim removes it.
	cacheUnused = 30 * 24 * time.Hour
	// cacheTouch is how stale a used file's time may be before it is
	// refreshed: one write an hour at most, not one a run.
	cacheTouch = time.Hour
	// cacheTrimEvery is how often the directory is trimmed.
	cacheTrimEvery = 24 * time.Hour
	// cacheTrimFile records, by its time, the last trim.
	cacheTrimFile = "trim.txt"
)

// cacheUsed marks the cache file at p as used now.
func cacheUsed(p string, now time.Time) {
	if st, err := os.Stat(p); err == nil && now.Sub(st.ModTime()) > cacheTouch {
		os.Chtimes(p, now, now)
	}
}

// trimCache removes from dir the cache files unused for cacheUnused,
// and the temporary files of writes that did not finish, at most once
// every cacheTrimEvery. Failing to is no error: the cache only grows.
func trimCache(dir string, now time.Time) {
	mark := filepath.Join(dir, cacheTrimFile)
	if st, err := os.Stat(mark); err == nil && now.Sub(st.ModTime()) < cacheTrimEvery {
		return
	}
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := e.Name()
		limit := cacheUnused
		switch {
		case strings.HasPrefix(name, ".tmp-"):
			limit = cacheTouch
		case strings.HasSuffix(name, ".idx"), strings.HasSuffix(name, ".types"), strings.HasSuffix(name, ".units"):
		default:
			continue // not ours (the guest's downloads, trim.txt)
		}
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() && now.Sub(info.ModTime()) > limit {
			os.Remove(filepath.Join(dir, name))
		}
	}
}
