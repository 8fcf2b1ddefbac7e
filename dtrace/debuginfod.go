package dtrace

import (
	"errors"
	"sync"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
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

// warnDebuginfod warns that the debuginfod servers failed to give the
// kernel's debug image when kinst goes on without it, from the symbol
// table: offsets still work, inline probes will say why they cannot.
// A server that merely has no such file is no news.
func warnDebuginfod(h *Handle, errs ...error) {
	for _, err := range errs {
		var nf *debuginfo.NotFoundError
		var e *debuginfod.Error
		if errors.As(err, &nf) && errors.As(nf.Debuginfod, &e) && !e.NotFound() {
			h.warnf("kinst without the kernel's DWARF: %v", nf.Debuginfod)
			return
		}
	}
}
