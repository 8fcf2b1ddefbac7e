package dtrace

import (
	"errors"
	"sync"

	"github.com/kdtrace/kdtrace/internal/debuginfod"
)

// debugFetcher finds, for the symbols of stack traces, the debug files
// of stripped objects on the debuginfod servers. Symbols are optional:
// the first failure other than the servers not having a file is
// warned about, once, and the addresses print as the objects' own
// tables allow.
type debugFetcher struct {
	h    *Handle
	once sync.Once
}

func (f *debugFetcher) fetch(id []byte) string {
	path, err := f.h.debuginfod.Find(f.h.cfg.Context, id, debuginfod.Debuginfo)
	var e *debuginfod.Error
	if err != nil && !(errors.As(err, &e) && e.NotFound()) {
		f.once.Do(func() { f.h.warnf("stack symbols without debug files: %v", err) })
	}
	return path
}
