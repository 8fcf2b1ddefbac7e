package cachefile

import (
	"strings"
	"time"

	"github.com/kdtrace/kdtrace/internal/cachedir"
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
	TrimFile = "trim.txt"
)

// Used marks the cache file name, last marked at mtime, as used
// now.
func Used(dir *cachedir.Dir, name string, mtime, now time.Time) {
	if now.Sub(mtime) > cacheTouch {
		dir.Touch(name, now)
	}
}

// StoreFile writes data to the cache file name, whole or not at all,
// then trims the cache.
func StoreFile(dir *cachedir.Dir, name string, data []byte) error {
	if err := dir.WriteFile(name, data); err != nil {
		return err
	}
	trimCache(dir, time.Now())
	return nil
}

// trimCache removes from dir the cache files unused for cacheUnused,
// and the temporary files of writes that did not finish, at most once
// every cacheTrimEvery. Failing to is no error: the cache only grows.
func trimCache(dir *cachedir.Dir, now time.Time) {
	if st, err := dir.Lstat(TrimFile); err == nil && now.Sub(st.ModTime) < cacheTrimEvery {
		return
	}
	if err := dir.WriteFile(TrimFile, nil); err != nil {
		return
	}
	names, err := dir.Names()
	if err != nil {
		return
	}
	for _, name := range names {
		limit := cacheUnused
		switch {
		case strings.HasPrefix(name, ".tmp-"):
			limit = cacheTouch
		case strings.HasSuffix(name, ".idx"), strings.HasSuffix(name, ".types"), strings.HasSuffix(name, ".units"), strings.HasSuffix(name, ".btf"), strings.HasSuffix(name, ".syscalls"), strings.HasSuffix(name, ".funcs"):
		default:
			continue // not ours (the guest's downloads, trim.txt)
		}
		if st, err := dir.Lstat(name); err == nil && st.Regular && now.Sub(st.ModTime) > limit {
			dir.Remove(name)
		}
	}
}
