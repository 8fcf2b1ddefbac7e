package attach

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/kdtrace/kdtrace/internal/amd64"
	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// Kprobes attaches prog, a kprobe program, at each kernel site of fbt
// and kinst: a kprobe at function+offset, a kretprobe for an fbt return
// site (Return set). The program finds which site fired by
// bpf_get_attach_cookie, cookies[i] being site i's; one program serves
// entry and return.
//
// When text is not nil, each kinst offset is first checked to be where
// an instruction starts in the function's code as text reads it (the
// running kernel's, through kallsyms and /proc/kcore): the kernel
// refuses such a probe itself, but the error reaches us as a misleading
// "no such file"; the refusal here is a *SiteError whose cause is a
// *BoundaryError naming the nearest boundaries. A site on the kernel's
// kprobe blacklist (BlacklistFile, when readable) is refused likewise,
// with a *BlacklistError.
//
// A function the kernel refuses because ftrace cannot trace it gets a
// *NotraceError saying so. A kernel without kprobe perf events gets
// HaveKprobes's sentence.
// Attaching is all or nothing.
func Kprobes(prog *ebpf.Program, sites []*probe.KernelSite, cookies []uint64, text *ksym.Table) (*attachment, error) {
	if err := checkCookies(len(sites), len(cookies)); err != nil {
		return nil, err
	}
	bl := kernelBlacklist()
	for i, s := range sites {
		err := checkKernelSite(s, text)
		if err == nil {
			err = checkBlacklist(s, bl)
		}
		if err != nil {
			return nil, &siteError{Index: i, Site: kernelSiteName(s), Err: err}
		}
	}
	if err := HaveKprobes(); err != nil {
		return nil, err
	}
	a := &attachment{}
	for i, s := range sites {
		sym, opts := kprobeOptions(s, cookies[i])
		attach := link.Kprobe
		if s.Return {
			attach = link.Kretprobe
		}
		l, err := attach(sym, prog, opts)
		if err != nil {
			err = explainRefusal(err, s.Module, s.Function, tracefsDirs)
			return a.fail(&siteError{Index: i, Site: kernelSiteName(s), Err: err})
		}
		a.add(l)
	}
	return a, nil
}

// kprobeOptions says where a site's kprobe goes: the function by name,
// which the kernel looks up in kallsyms (a module's function too), and
// the offset from it.
func kprobeOptions(s *probe.KernelSite, cookie uint64) (string, *link.KprobeOptions) {
	return s.Function, &link.KprobeOptions{Offset: s.Offset, Cookie: cookie}
}

func kernelSiteName(s *probe.KernelSite) string {
	switch {
	case s.Return:
		return s.Function + ":return"
	case s.Offset == 0:
		return s.Function
	}
	return s.Function + "+" + strconv.FormatUint(s.Offset, 10)
}

// checkKernelSite checks a site's offset against the function's code,
// when text is given.
func checkKernelSite(s *probe.KernelSite, text *ksym.Table) error {
	if s.Return && s.Offset != 0 {
		return errors.New("a return probe goes on a function's entry, not at an offset")
	}
	if s.Offset == 0 || text == nil {
		return nil
	}
	syms, err := text.Lookup(s.Module, s.Function)
	if err != nil {
		return fmt.Errorf("cannot check offset %d: %w", s.Offset, err)
	}
	sym := syms[0]
	for _, c := range syms {
		// Static functions of one name: the site's own, where the
		// catalog knew its address.
		if s.Addr != 0 && c.Addr == s.Addr {
			sym = c
		}
	}
	code, err := text.Code(sym)
	if err != nil {
		return fmt.Errorf("cannot check offset %d: %w", s.Offset, err)
	}
	fn, err := amd64.NewFunction(code, sym.Addr)
	if err != nil {
		return fmt.Errorf("cannot decode the function to check offset %d: %w", s.Offset, err)
	}
	return checkBoundary(fn, s.Offset, false)
}
