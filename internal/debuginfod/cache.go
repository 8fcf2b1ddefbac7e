package debuginfod

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kdtrace/kdtrace/internal/cachedir"
)

// The cache's control files, and their defaults, elfutils'.
const (
	intervalFile = "cache_clean_interval_s"
	maxAgeFile   = "max_unused_age_s"
	missFile     = "cache_miss_s"

	defaultInterval = 24 * time.Hour
	defaultMaxAge   = 7 * 24 * time.Hour
	defaultMiss     = 10 * time.Minute
)

// config returns the number of seconds in the control file name of dir,
// writing def there when the file is missing or empty; def when the
// file holds no number.
func config(dir *cachedir.Dir, name string, def time.Duration) time.Duration {
	f, err := dir.Open(name)
	if err != nil {
		dir.WriteFile(name, []byte(strconv.FormatInt(int64(def/time.Second), 10)))
		return def
	}
	b, err := io.ReadAll(io.LimitReader(f, 64))
	f.Close()
	if err != nil {
		return def
	}
	if len(b) == 0 {
		dir.WriteFile(name, []byte(strconv.FormatInt(int64(def/time.Second), 10)))
		return def
	}
	s := strings.TrimLeft(string(b), " \t\n\v\f\r")
	if s == "" || !strings.ContainsAny(s[:1], "+-0123456789") {
		return def // fscanf's %ld matched nothing
	}
	return time.Duration(atoi(s)) * time.Second
}

// clean removes what has gone unused for max_unused_age_s, if
// cache_clean_interval_s has passed since the last cleaning (see the
// package comment).
func (c *Client) clean(dir *cachedir.Dir, now time.Time) error {
	interval := config(dir, intervalFile, defaultInterval)
	st, err := dir.Lstat(intervalFile)
	if err != nil {
		return err
	}
	if now.Sub(st.ModTime) < interval {
		return nil
	}
	// Marked first, as elfutils does, so that concurrent lookups do not
	// all clean.
	if err := dir.Touch(intervalFile, now); err != nil {
		return err
	}
	maxAge := config(dir, maxAgeFile, defaultMaxAge)
	names, err := dir.Names()
	if err != nil {
		return err
	}
	removed := 0
	for _, id := range names {
		if !isHex(id) {
			continue
		}
		dst, err := dir.Lstat(id)
		if err != nil || !dst.Dir {
			continue
		}
		removed += cleanBuildID(dir, id, now, maxAge)
		if now.Sub(dst.ModTime) >= maxAge {
			dir.RemoveDir(id) // only if now empty
		}
	}
	c.verbosef("cleaned cache %s: %d files unused for %v removed", dir.Path, removed, maxAge)
	return nil
}

// cleanBuildID removes the files of the build-id directory id that have
// not been read for maxAge, and stale temporary files; it returns how
// many it removed.
func cleanBuildID(dir *cachedir.Dir, id string, now time.Time, maxAge time.Duration) int {
	sub, err := dir.Sub(id)
	if err != nil {
		return 0
	}
	defer sub.Close()
	names, err := sub.Names()
	if err != nil {
		return 0
	}
	n := 0
	for _, name := range names {
		st, err := sub.Lstat(name)
		if err != nil || !st.Regular {
			continue
		}
		old := cached(name) && now.Sub(st.AccessTime) >= maxAge
		stale := (isTemp(name, string(Debuginfo)) || isTemp(name, string(Executable))) && now.Sub(st.ModTime) > staleTemp
		if (old || stale) && sub.Remove(name) == nil {
			n++
		}
	}
	return n
}

// cached reports whether name is a file the clients put in a build-id
// directory that elfutils' cleaning removes: debuginfo, executable and
// source files (0.188's rule).
func cached(name string) bool {
	return name == string(Debuginfo) || name == string(Executable) || strings.HasPrefix(name, "source")
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}
