package debuginfo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"

	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
	"github.com/kdtrace/kdtrace/internal/debuginfod"
)

// ErrNotELF is the error of opening a file that is not an ELF file.
var ErrNotELF = elffile.ErrNotELF

// CheckFile reports whether path is an ELF file that this package can
// read: the error names the file and says what is wrong with it, not
// an ELF file (ErrNotELF), a directory, missing.
func CheckFile(path string) error {
	e, err := elffile.Open(path)
	if err != nil {
		return err
	}
	return e.Close()
}

// Open makes a set from files, for any kernel on any machine: a kernel
// image (which may carry its DWARF, as a vmlinux from a -dbg package
// does), and module images. Either may be empty. A module that cannot
// be indexed is skipped with a warning; a kernel that cannot is an
// error.
func Open(kernel string, modules []string, opts Options) (*Set, error) {
	if kernel == "" && len(modules) == 0 {
		return nil, errors.New("no kernel or module files given")
	}
	s := &Set{}
	opts = s.collecting(opts)
	var images []*Image
	if kernel != "" {
		img, err := openImage("kernel", kernel, nil, opts)
		if err != nil {
			return nil, err
		}
		images = append(images, img)
	}
	for _, m := range modules {
		img, err := OpenImage(m, opts)
		if err != nil {
			s.warnSkip(m, err)
			continue
		}
		images = append(images, img)
	}
	if len(images) == 0 {
		return nil, fmt.Errorf("no usable debug info: %w", errors.Join(warningErrs(s.warnings)...))
	}
	set := NewSet(images...)
	set.warnings = s.warnings
	return set, nil
}

// collecting returns opts with Warn also recording into s.
func (s *Set) collecting(opts Options) Options {
	prev := opts.Warn
	opts.Warn = func(w Warning) {
		s.warnings = append(s.warnings, w)
		if prev != nil {
			prev(w)
		}
	}
	return opts
}

// warnSkip records a skipped image. A mismatch was already reported by
// locate.
func (s *Set) warnSkip(path string, err error) {
	var m *MismatchError
	if errors.As(err, &m) {
		return
	}
	w := Warning{Image: path, Err: fmt.Errorf("skipped: %w", err)}
	s.warnings = append(s.warnings, w)
}

func warningErrs(ws []Warning) []error {
	var errs []error
	for _, w := range ws {
		errs = append(errs, w)
	}
	return errs
}

// openMatching opens, as the image of module, the first existing
// candidate whose build-id is want (any, if want is ""). Candidates
// with another build-id are reported and passed over. looked says what
// was tried, for the error when nothing matches.
func openMatching(module string, cands []string, want string, opts Options) (img *Image, looked []string, err error) {
	seen := map[string]bool{}
	for _, p := range cands {
		if seen[p] {
			continue
		}
		seen[p] = true
		if _, err := os.Stat(p); err != nil {
			looked = append(looked, p+" (missing)")
			continue
		}
		img, err := openImage(module, p, nil, opts)
		if err != nil {
			looked = append(looked, fmt.Sprintf("%s (%v)", p, err))
			continue
		}
		if want != "" && img.BuildID != want {
			err := &MismatchError{Image: module, DebugFile: p, Reason: fmt.Sprintf("build-id %s, running %s has %s", img.BuildID, module, want)}
			opts.warn(Warning{Image: module, DebugFile: p, Err: err})
			looked = append(looked, p+" (other build-id)")
			img.Close()
			continue
		}
		return img, looked, nil
	}
	path, derr := opts.fetchDebug(want)
	if path != "" {
		img, err := openImage(module, path, nil, opts)
		if err == nil {
			img.Source = sourceDebuginfod
			return img, looked, nil
		}
		derr = fmt.Errorf("%s: %w", path, err)
	}
	if derr != nil {
		looked = append(looked, derr.Error())
	}
	return nil, looked, &NotFoundError{Image: module, Looked: looked, Debuginfod: derr}
}

// fetchDebug asks the debuginfod servers of opts for the debug file of
// the build-id id (hex): its path in their cache, or "" when there is
// no client or no build-id to ask for.
func (o *Options) fetchDebug(id string) (string, error) {
	if o.Debuginfod == nil || id == "" {
		return "", nil
	}
	b, err := hex.DecodeString(id)
	if err != nil {
		return "", fmt.Errorf("build-id %q: %w", id, err)
	}
	ctx := o.Context
	if ctx == nil {
		ctx = context.Background()
	}
	return o.Debuginfod.Find(ctx, b, debuginfod.Debuginfo)
}

// buildIDPath is where distributions link debug files by build-id.
func buildIDPath(root, id string) string {
	if len(id) < 3 {
		return ""
	}
	return root + "/.build-id/" + id[:2] + "/" + id[2:] + ".debug"
}
