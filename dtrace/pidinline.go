package dtrace

import (
	"errors"
	"fmt"
	"sync"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/dlang/sugar"
	"github.com/kdtrace/kdtrace/internal/kinst"
)

// lazyPid answers the pid rewrite's questions from the DWARF of the
// objects processes map, opening each object's image on the first
// question about it, so that programs whose pid probes name no inlined
// function of an object with DWARF read none. The sites are kinst's:
// the same Resolver over the object's image.
type lazyPid struct {
	h *Handle

	mu   sync.Mutex
	objs map[string]*pidObject // by file
}

// pidObject is one object's resolver, or why it has none.
type pidObject struct {
	set *debuginfo.Set
	r   *kinst.Resolver
}

// Sites returns the sites of pidPID:module:fn:entry or :return; nil,
// leaving the description as written, when the process maps no such
// object, the object has no DWARF, or its DWARF does not know fn: the
// pid provider then makes the probes from the symbol table, or says
// what is missing, as it did without the rewrite.
func (l *lazyPid) Sites(pid int, module, fn string, ret bool) (*sugar.Sites, error) {
	if l.h.catalog == nil {
		return nil, nil
	}
	file, err := l.h.catalog.ObjectFile(pid, module)
	if err != nil || file == "" {
		return nil, nil // the pid provider reports it when matching
	}
	o := l.object(file)
	if o.r == nil {
		return nil, nil
	}
	s, err := o.r.Sites(fn, ret)
	var unknown *debuginfo.UnknownFunctionError
	if errors.As(err, &unknown) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := o.unique(fn, s); err != nil {
		return nil, err
	}
	return s, nil
}

// unique checks that each function the sites name is one symbol of the
// object: the pid provider finds a function by its name alone, so a
// site in one of several static functions of that name would be made
// in another.
func (o *pidObject) unique(fn string, s *sugar.Sites) error {
	img := o.set.Images()[0]
	seen := map[string]bool{}
	names := append([]string(nil), s.Clones...)
	for _, site := range s.Sites {
		names = append(names, site.Func)
	}
	for _, g := range s.Guards {
		names = append(names, g.Entry.Func)
	}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		if _, _, err := o.set.Code(img.Module, name); err != nil {
			return fmt.Errorf("a probe of %s is in %s, which the pid provider cannot name: %w", fn, name, err)
		}
	}
	return nil
}

// object opens the image of file the first time it is asked for.
func (l *lazyPid) object(file string) *pidObject {
	l.mu.Lock()
	defer l.mu.Unlock()
	if o, ok := l.objs[file]; ok {
		return o
	}
	if l.objs == nil {
		l.objs = make(map[string]*pidObject)
	}
	o := &pidObject{}
	l.objs[file] = o
	img, err := debuginfo.OpenImage(file, l.h.debugOptions())
	if err != nil {
		var nf *debuginfo.NotFoundError
		if !errors.As(err, &nf) || nf.Debuginfod != nil {
			// DWARF that cannot be read, or that the debuginfod
			// servers did not give, leaves the object's probes as
			// the symbol table gives them, with a word why.
			l.h.warnf("no inline sites in %s: %v", file, err)
		}
		return o
	}
	o.set = debuginfo.NewSet(img)
	o.r = &kinst.Resolver{Set: o.set, Compat: l.h.opts.IsSet("kinstcompat"), Uprobes: true,
		Warn: func(err error) { l.h.warnf("%v", err) }}
	return o
}

// close releases the images opened.
func (l *lazyPid) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range l.objs {
		if o.set != nil {
			o.set.Close()
		}
	}
}
