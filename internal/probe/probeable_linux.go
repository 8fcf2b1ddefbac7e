//go:build linux

package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kdtrace/kdtrace/internal/ksym"
)

// readProbeable reads the set from FilterFunctions in the first of
// tracefsDirs that has it, and from the kprobe blacklist at blacklist
// where it can be read. It returns nil, and no error, when no tracefs
// list can be read (tracefs not mounted, or not readable to the user):
// fbt then lists every function, and the kernel refuses the ones it
// cannot probe when they are enabled.
func readProbeable(tracefsDirs []string, blacklist string) (*probeable, error) {
	var f *os.File
	for _, dir := range tracefsDirs {
		var err error
		if f, err = os.Open(filepath.Join(dir, ksym.FilterFunctions)); err == nil {
			break
		}
	}
	if f == nil {
		return nil, nil
	}
	defer f.Close()
	refused := map[ksym.Name]bool{}
	if b, err := os.Open(blacklist); err == nil {
		names, err := ksym.ReadKprobeBlacklist(b)
		b.Close()
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			refused[n] = true
		}
	} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		return nil, err
	}
	builders := map[string]*funcListBuilder{}
	err := ksym.ReadFilterFunctions(f, func(module string, name []byte) {
		if len(refused) > 0 && refused[ksym.Name{Module: module, Name: string(name)}] {
			return
		}
		b := builders[module]
		if b == nil {
			b = &funcListBuilder{}
			builders[module] = b
		}
		b.add(name)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	p := &probeable{mods: make(map[string]*funcList, len(builders))}
	for m, b := range builders {
		p.mods[m] = b.build(m)
	}
	return p, nil
}
