package ksym

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// The kernel publishes two lists of its functions that say which of them
// tracing can reach: ftrace's, of the functions it can trace, and the
// kprobe blacklist. Both name a module's function "name [module]".

// FilterFunctions is ftrace's list of the functions it can trace, in a
// tracefs directory (/sys/kernel/tracing): a function missing from it is
// notrace (or inline in the sources and kept out of line), or init code
// freed after boot.
const FilterFunctions = "available_filter_functions"

// KprobeBlacklist lists the code the kernel refuses kprobes on:
// functions marked NOKPROBE_SYMBOL, and each function of the noinstr,
// entry and __kprobes text. Only root reads its addresses.
const KprobeBlacklist = "/sys/kernel/debug/kprobes/blacklist"

// A Name is a function's name and module, KernelModule for the kernel's
// own.
type Name struct {
	Module, Name string
}

// ReadFilterFunctions parses FilterFunctions' lines, "name" or "name
// [module]", calling fn with each; name is valid only during the call.
// The list is long (some 50,000 lines), so nothing is kept.
func ReadFilterFunctions(r io.Reader, fn func(module string, name []byte)) error {
	sc := bufio.NewScanner(r)
	mods := map[string]string{} // one string for each module's name
	for sc.Scan() {
		line := sc.Bytes()
		name, mod, ok := bytes.Cut(line, []byte(" ["))
		module := KernelModule
		if ok {
			m, found := bytes.CutSuffix(mod, []byte("]"))
			if !found {
				return fmt.Errorf("%s: bad line %q", FilterFunctions, line)
			}
			if module, ok = mods[string(m)]; !ok {
				module = string(m)
				mods[module] = module
			}
		}
		if len(name) > 0 {
			fn(module, name)
		}
	}
	return sc.Err()
}

// ReadKprobeBlacklist parses KprobeBlacklist's lines, "0xLO-0xHI\tname"
// with an optional "[module]". The addresses are left: readers other
// than root see zeros, and the name is what a probe gives.
func ReadKprobeBlacklist(r io.Reader) ([]Name, error) {
	var out []Name
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 2 {
			continue
		}
		if !bytes.HasPrefix(f[0], []byte("0x")) || !bytes.Contains(f[0], []byte("-")) {
			return nil, fmt.Errorf("%s: bad range %q", KprobeBlacklist, f[0])
		}
		n := Name{Module: KernelModule, Name: string(f[1])}
		if len(f) > 2 {
			n.Module = string(bytes.Trim(f[2], "[]"))
		}
		out = append(out, n)
	}
	return out, sc.Err()
}
