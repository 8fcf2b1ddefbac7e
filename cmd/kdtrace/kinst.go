package main

import (
	"fmt"
	"io"

	"github.com/kdtrace/kdtrace/debuginfo"
	"github.com/kdtrace/kdtrace/dlang/sugar"
	"github.com/kdtrace/kdtrace/kinst"
	"github.com/kdtrace/kdtrace/ksym"
)

// kinstConfig names the images the kinst rewrite reads: the files given
// with --kernel and --module, or else the running kernel.
type kinstConfig struct {
	kernel    string
	modules   []string
	debugRoot string
	// symbols is the kernel's symbol table, where functions' code is
	// found without debug information.
	symbols func() (*ksym.Table, error)
}

// lazyKinst opens the images on the first kinst question, so that
// programs without kinst probes never read debug information.
type lazyKinst struct {
	cfg       *kinstConfig
	zeroMatch bool
	compat    bool
	warn      io.Writer
	progName  string

	set *debuginfo.Set
	r   *kinst.Resolver
	err error
}

func (l *lazyKinst) resolver() (*kinst.Resolver, error) {
	if l.r != nil || l.err != nil {
		return l.r, l.err
	}
	opts := debuginfo.Options{
		DebugRoot: l.cfg.debugRoot,
		Warn: func(w debuginfo.Warning) {
			fmt.Fprintf(l.warn, "%s: warning: %v\n", l.progName, w)
		},
	}
	if l.cfg.kernel != "" || len(l.cfg.modules) > 0 {
		l.set, l.err = debuginfo.Open(l.cfg.kernel, l.cfg.modules, opts)
	} else {
		l.set, l.err = debuginfo.Kernel(opts)
	}
	var syms *ksym.Table
	if l.err != nil && l.cfg.symbols != nil && (l.cfg.kernel != "" || len(l.cfg.modules) == 0) {
		// Without debug information, offsets are checked against the
		// code the kernel's symbol table finds (modules' files have
		// none to give).
		var serr error
		if syms, serr = l.cfg.symbols(); serr != nil {
			return nil, l.err
		}
	}
	if l.err != nil && syms == nil {
		return nil, l.err
	}
	l.r = &kinst.Resolver{Set: l.set, Symbols: syms, NoDebug: l.err, Compat: l.compat, ZeroMatch: l.zeroMatch,
		Warn: func(err error) { fmt.Fprintf(l.warn, "%s: warning: %v\n", l.progName, err) }}
	l.err = nil
	return l.r, nil
}

func (l *lazyKinst) Sites(fn string, ret bool) (*sugar.Sites, error) {
	r, err := l.resolver()
	if err != nil {
		return nil, err
	}
	return r.Sites(fn, ret)
}

// CheckOffset checks kinst::fn:off against the code of fn: that of the
// images given with --kernel and --module, or the running kernel's,
// found through debug information or the symbol table.
func (l *lazyKinst) CheckOffset(fn string, off uint64) error {
	r, err := l.resolver()
	if err != nil {
		return err
	}
	return r.CheckOffset(fn, off)
}

// close releases the images, if they were opened.
func (l *lazyKinst) close() {
	if l.set != nil {
		l.set.Close()
	}
}
