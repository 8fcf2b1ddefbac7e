//go:build linux

package probe

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kdtrace/kdtrace/internal/ksym"
)

// Live returns the catalog of the running system: the dtrace and
// profile providers; fbt and kinst over the functions of the kernel's
// BTF (/sys/kernel/btf/vmlinux and the modules' split BTF beside it),
// or of /proc/kallsyms when the kernel has no BTF, and for a loaded
// module without BTF, of its symbols in /proc/kallsyms, fbt's globs
// matching only the functions the kernel lets it probe (those in
// tracefs's available_filter_functions and not on the kprobe blacklist,
// where tracefs can be read); syscall over tracefs's
// syscall events or the kernel's syscall handlers of the calls
// cfg.Syscalls names; proc, sched, io and lockstat, made from the kernel's
// tracepoints (SDT); cpc over the machine's perf events;
// and a pid provider for each process a description names (pid<PID>),
// made on demand from /proc. Nothing is read until a description needs
// it.
func Live(cfg Config) (*Catalog, error) {
	k := &kernel{types: cfg.Types, syscallPrefix: syscallPrefix(runtime.GOARCH)}
	btfDir := cfg.path("/sys/kernel/btf")
	kallsyms := cfg.path("/proc/kallsyms")
	syms := cfg.Symbols
	if syms == nil {
		syms = sync.OnceValues(func() (*ksym.Table, error) {
			return ksym.Kallsyms(kallsyms, cfg.path("/proc/kcore"))
		})
	}
	procModules := cfg.path("/proc/modules")
	// The kernel's build-id, which names its cached lists, is read once.
	kcache := sync.OnceValue(func() *kernelCache { return newKernelCache(cfg.Cache, cfg.path("/")) })
	k.load = func() ([]*funcList, error) {
		var types func(string) (KernelTypes, error)
		if k.types != nil {
			types = k.typesOf
		}
		return liveFuncs(btfDir, procModules, syms, func(path string) (*funcList, uint32, error) {
			return cachedKernelFuncs(kcache(), path, types)
		}, types)
	}
	k.code = func(l *funcList, i int) (uint64, []byte, error) { return symbolCode(syms, l.module, l.name(i)) }
	tracefs := []string{cfg.path("/sys/kernel/tracing"), cfg.path("/sys/kernel/debug/tracing")}
	blacklist := cfg.path(ksym.KprobeBlacklist)
	k.probeable = sync.OnceValues(func() (*probeable, error) { return readProbeable(tracefs, blacklist) })
	c := kernelCatalog(&source{k: k, cfg: &cfg, arch: runtime.GOARCH, live: true, tracefs: tracefs,
		handlers: func() ([]string, error) {
			return cachedHandlers(kcache(), kallsyms, k.syscallPrefix)
		}})
	c.procs = &procFS{root: cfg.path("/proc")}
	c.warn = cfg.Warn
	c.debugFile = cfg.DebugFile
	if cfg.MaxPIDProbes > 0 {
		c.maxPID = int64(cfg.MaxPIDProbes)
	}
	return c, nil
}

// liveFuncs lists the running kernel's functions from its BTF, or from
// its symbol table when it has none: the kernel's from the BTF types
// gives where that was read from the same file (see loadBTFFuncs), the
// modules' from their files, as the checker reads few of their types. A module loaded without BTF (an
// out-of-tree module built where pahole found no vmlinux, as DKMS and
// kbuild against a distribution's headers build them) has its functions
// listed from the symbol table, which is read only then.
//
// kernel lists the functions of the kernel's BTF at a path, as
// loadBTFFuncs does; types gives the modules' BTF the checker read.
func liveFuncs(btfDir, procModules string, syms func() (*ksym.Table, error), kernel func(path string) (*funcList, uint32, error), types func(string) (KernelTypes, error)) ([]*funcList, error) {
	vmlinux := filepath.Join(btfDir, KernelModule)
	kl, strLen, err := kernel(vmlinux)
	if errors.Is(err, fs.ErrNotExist) {
		t, err := syms()
		if err != nil {
			return nil, fmt.Errorf("the kernel has no BTF (%s) and its symbols cannot be read: %w", vmlinux, err)
		}
		return tableFuncs(t, nil), nil
	}
	if err != nil {
		return nil, err
	}
	ls := []*funcList{kl}
	ents, err := os.ReadDir(btfDir)
	if err != nil {
		return nil, err
	}
	hasBTF := map[string]bool{}
	for _, e := range ents {
		hasBTF[e.Name()] = true
		if e.Name() == KernelModule {
			continue
		}
		l, _, err := loadBTFFuncs(filepath.Join(btfDir, e.Name()), e.Name(), strLen, nil)
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
	}
	noBTF := map[string]bool{}
	for _, m := range loadedModules(procModules) {
		if !hasBTF[m] {
			noBTF[m] = true
		}
	}
	if len(noBTF) == 0 {
		return ls, nil
	}
	t, err := syms()
	if err != nil {
		return nil, fmt.Errorf("modules without BTF (%s): their symbols cannot be read: %w", strings.Join(slices.Sorted(maps.Keys(noBTF)), ", "), err)
	}
	return append(ls, tableFuncs(t, noBTF)...), nil
}

// loadedModules returns the names of the modules in procModules, as
// /proc/modules lists them; none when it cannot be read (a kernel
// without module support has no such file).
func loadedModules(procModules string) []string {
	b, err := os.ReadFile(procModules)
	if err != nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		if name, _, ok := strings.Cut(line, " "); ok {
			names = append(names, name)
		}
	}
	return names
}

// kallsymsHandlers returns the names of the kernel's syscall handlers
// (those starting with prefix) in the kallsyms file at path, which
// every user may read: those it defines, not the weak symbols (W) that
// stand, as aliases of sys_ni_syscall, for the calls it was built
// without (init_module without CONFIG_MODULES), which have no
// tracepoint and do nothing. BTF cannot tell the two apart, and lacks
// handlers of calls without arguments (getpid).
func kallsymsHandlers(path, prefix string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "ffffffff81382730 T __x64_sys_getpid", without a module.
		_, rest, _ := strings.Cut(sc.Text(), " ")
		typ, name, ok := strings.Cut(rest, " ")
		if ok && (typ == "T" || typ == "t") && strings.HasPrefix(name, prefix) && !strings.Contains(name, "\t") {
			names = append(names, name)
		}
	}
	return names, sc.Err()
}
