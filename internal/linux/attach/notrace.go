package attach

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/internal/ksym"
)

// A NotraceError says why the kernel refused a kprobe in a function:
// kprobe events refuse every instruction of a function ftrace cannot
// trace (the kernel's __within_notrace_func) unless the kernel was built
// with CONFIG_KPROBE_EVENTS_ON_NOTRACE, which distributions leave off.
// Such a function is declared notrace, or inline in the kernel's
// sources (its inline implies notrace) and kept out of line.
type notraceError struct {
	Function string
	Module   string // "" or "vmlinux" for the kernel's own
	Listing  string // the tracefs file it is missing from
}

func (e *notraceError) Error() string {
	fn := e.Function
	if !kernelModule(e.Module) {
		fn += " [" + e.Module + "]"
	}
	return fmt.Sprintf("the kernel refuses kprobes in %s: it is notrace (not in %s), and kprobe events refuse notrace functions (CONFIG_KPROBE_EVENTS_ON_NOTRACE is off)",
		fn, e.Listing)
}

// explainRefusal returns err, the kernel's refusal of a kprobe in
// function fn of module (which cilium/ebpf reports as a missing symbol,
// ENOENT, after trying the syscall wrapper's name, or as EINVAL), as a
// *NotraceError when ftrace's list of the functions it can trace, in
// one of tracefsDirs, does not have fn.
func explainRefusal(err error, module, fn string, tracefsDirs []string) error {
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, unix.EINVAL) {
		return err
	}
	for _, dir := range tracefsDirs {
		path := filepath.Join(dir, ksym.FilterFunctions)
		listed, lerr := filterListed(path, module, fn)
		if lerr != nil {
			continue
		}
		if !listed {
			return &notraceError{Function: fn, Module: module, Listing: path}
		}
		return err
	}
	return err
}

// filterListed reports whether ftrace's list of the functions it can
// trace, at path, lists fn of module.
func filterListed(path, module, fn string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if kernelModule(module) {
		module = ksym.KernelModule
	}
	listed := false
	err = ksym.ReadFilterFunctions(f, func(m string, name []byte) {
		listed = listed || m == module && string(name) == fn
	})
	return listed, err
}

// kernelModule reports whether module names the kernel itself.
func kernelModule(module string) bool { return module == "" || module == "vmlinux" }
