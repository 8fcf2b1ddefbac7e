package cachefile

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/kdtrace/kdtrace/internal/cachedir"
)

func dirPath(custom string) (string, error) {
	if custom != "" {
		return custom, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "kdtrace"), nil
}

// caches holds the cache directories this process has opened, by path:
// each is checked once (see internal/cachedir), and one refused is
// reported once, then the work goes on without it.
var caches = struct {
	sync.Mutex
	m map[string]*openCache
}{}

type openCache struct {
	dir  *cachedir.Dir
	err  error
	told bool
}

// Open returns the cache directory custom, or kdtrace's under
// os.UserCacheDir when custom is "", or nil if there is none to use
// (noCache, or the directory is refused: the first time, warn, if not
// nil, is told why).
func Open(custom string, noCache bool, warn func(error)) *cachedir.Dir {
	if noCache {
		return nil
	}
	path, err := dirPath(custom)
	caches.Lock()
	c := caches.m[path]
	if c == nil {
		c = &openCache{err: err}
		if err == nil {
			c.dir, c.err = cachedir.Open(path)
		}
		switch {
		case c.err != nil && path == "":
			c.err = fmt.Errorf("not using a cache: %w", c.err)
		case c.err != nil:
			c.err = fmt.Errorf("not using the cache %s: %w", path, c.err)
		}
		if caches.m == nil {
			caches.m = make(map[string]*openCache)
		}
		caches.m[path] = c
	}
	tell := c.err != nil && !c.told && warn != nil
	c.told = c.told || tell
	caches.Unlock()
	if tell {
		warn(c.err)
	}
	return c.dir
}
