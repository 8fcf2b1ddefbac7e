package attach

import (
	"errors"
	"fmt"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// A userPoint is one place a uprobe goes, resolved from a site.
type userPoint struct {
	index  int // of the site in the call
	site   string
	obj    *object
	pid    int
	ret    bool
	off    uint64 // the instruction's file offset
	refCtr uint64 // the semaphore's file offset, or 0
	cookie uint64
}

// Uprobes attaches prog, a kprobe-type program loaded with
// UprobeAttachType, at each of the pid provider's sites: a uprobe at
// the function's entry or offset, a uretprobe for a site with Return
// set. The program finds which site fired by bpf_get_attach_cookie:
// cookies[i] is site i's; it tells entry from return the same way, so
// one program serves both. A site with a PID fires only in that
// process.
//
// Before attaching anything, each offset is checked to be where an
// instruction starts, by decoding the function from the object's file:
// the kernel does not check, and a probe inside an instruction corrupts
// the traced program. The refusal is a *SiteError whose cause is a
// *BoundaryError naming the nearest boundaries. An offset at a syscall
// instruction, which crashes the traced process when probed, is refused
// as well.
//
// Where the kernel has uprobe_multi links, the sites of one file, process
// and kind share one link; elsewhere each has its own perf event link.
// Attaching is all or nothing: on any error, what was attached is
// detached.
func Uprobes(prog *ebpf.Program, sites []*probe.UserSite, cookies []uint64) (*attachment, error) {
	if err := checkCookies(len(sites), len(cookies)); err != nil {
		return nil, err
	}
	objs := objects{}
	defer objs.close()
	pts := make([]userPoint, 0, len(sites))
	for i, s := range sites {
		pt, err := userSite(objs, s)
		if err != nil {
			return nil, &siteError{Index: i, Site: pt.site, Err: err}
		}
		pt.index, pt.cookie = i, cookies[i]
		pts = append(pts, pt)
	}
	return attachUser(prog, pts)
}

// userSite resolves a pid probe's site, checking its offset.
func userSite(objs objects, s *probe.UserSite) (userPoint, error) {
	pt := userPoint{site: s.Path, pid: s.PID, ret: s.Return}
	o, err := objs.open(s.Path, s.PID)
	if err != nil {
		return pt, err
	}
	pt.obj = o
	fn, size, addr := s.Addr, s.Size, s.Addr+s.Offset
	name := fmt.Sprintf("%#x", s.Addr)
	if sym, ok := o.function(s.Addr); ok && sym.Value == s.Addr {
		name = sym.Name
	}
	switch {
	case s.Addr == 0:
		// Function "-": an address, checked against the function that
		// holds it.
		pt.site = fmt.Sprintf("%s:%#x", s.Path, s.Offset)
		sym, ok := o.function(addr)
		if !ok {
			return pt, fmt.Errorf("the address is in no function of %s, so whether an instruction starts there cannot be checked", s.Path)
		}
		fn, size = sym.Value, sym.Size
	case s.Return:
		pt.site = name + ":return"
		if s.Offset != 0 {
			return pt, errors.New("a return probe goes on a function's entry, not at an offset")
		}
	case s.Offset == 0:
		pt.site = name + ":entry"
	default:
		pt.site = fmt.Sprintf("%s+%#x", name, s.Offset)
	}
	if addr != fn {
		if size == 0 {
			return pt, errors.New("the function's size is unknown, so whether an instruction starts at the offset cannot be checked")
		}
		if err := o.checkOffset(fn, size, addr-fn); err != nil {
			return pt, err
		}
	}
	pt.off, err = o.fileOffset(addr, true)
	return pt, err
}

// USDT attaches prog, a kprobe-type program loaded with
// UprobeAttachType, at every point of each USDT site; the program finds
// which site fired by bpf_get_attach_cookie, cookies[i] being site i's.
// A point with a semaphore has the kernel count it up in the process
// while the probe is attached and down when it is detached, so that the
// program's is-enabled tests see the probe. The points are where the
// assembler put <sys/sdt.h>'s nop: instruction boundaries by
// construction, not checked again. A site of any process fires in
// every process that maps its file.
func USDT(prog *ebpf.Program, sites []*probe.USDTSite, cookies []uint64) (*attachment, error) {
	if err := checkCookies(len(sites), len(cookies)); err != nil {
		return nil, err
	}
	objs := objects{}
	defer objs.close()
	var pts []userPoint
	for i, s := range sites {
		o, err := objs.open(s.Path, s.PID)
		if err != nil {
			return nil, &siteError{Index: i, Site: s.Path, Err: err}
		}
		if len(s.Points) == 0 {
			return nil, &siteError{Index: i, Site: s.Path, Err: errors.New("the USDT probe has no points")}
		}
		pid := s.PID
		if s.AnyProcess {
			pid = 0 // the file's uprobes fire in every process
		}
		for _, p := range s.Points {
			pt := userPoint{index: i, site: fmt.Sprintf("%s:%#x", s.Path, p.Addr), obj: o, pid: pid, cookie: cookies[i]}
			if pt.off, err = o.fileOffset(p.Addr, true); err != nil {
				return nil, &siteError{Index: i, Site: pt.site, Err: err}
			}
			if p.Semaphore != 0 {
				if pt.refCtr, err = o.fileOffset(p.Semaphore, false); err != nil {
					return nil, &siteError{Index: i, Site: pt.site, Err: fmt.Errorf("semaphore: %w", err)}
				}
			}
			pts = append(pts, pt)
		}
	}
	return attachUser(prog, pts)
}

// attachUser attaches prog at every point, all or nothing.
func attachUser(prog *ebpf.Program, pts []userPoint) (*attachment, error) {
	a := &attachment{}
	if uprobeMulti() {
		type key struct {
			file string
			pid  int
			ret  bool
		}
		var order []key
		groups := map[key][]userPoint{}
		for _, pt := range pts {
			k := key{pt.obj.file, pt.pid, pt.ret}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], pt)
		}
		for _, k := range order {
			g := groups[k]
			if err := attachMulti(a, prog, g); err != nil {
				return a.fail(err)
			}
		}
		return a, nil
	}
	if _, err := os.Stat(eventSources + "/uprobe/type"); err != nil {
		// cilium would make the probes through tracefs text entries,
		// which outlive a process killed with SIGKILL.
		return nil, errors.New("this kernel cannot probe user instructions: it has no uprobe event source (Linux 4.17), only tracefs uprobe_events, whose probes would outlive kdtrace")
	}
	for _, pt := range pts {
		ex, err := link.OpenExecutable(pt.obj.file)
		if err != nil {
			return a.fail(&siteError{Index: pt.index, Site: pt.site, Err: err})
		}
		opts := &link.UprobeOptions{Address: pt.off, PID: pt.pid, RefCtrOffset: pt.refCtr, Cookie: pt.cookie}
		attach := ex.Uprobe
		if pt.ret {
			attach = ex.Uretprobe
		}
		l, err := attach("", prog, opts)
		if err != nil {
			return a.fail(&siteError{Index: pt.index, Site: pt.site, Err: err})
		}
		a.add(l)
	}
	return a, nil
}

// attachMulti attaches prog at the points of one file, process and
// kind with one uprobe_multi link.
func attachMulti(a *attachment, prog *ebpf.Program, g []userPoint) error {
	opts := &link.UprobeMultiOptions{PID: uint32(g[0].pid)}
	refCtrs := false
	for _, pt := range g {
		opts.Addresses = append(opts.Addresses, pt.off)
		opts.Cookies = append(opts.Cookies, pt.cookie)
		opts.RefCtrOffsets = append(opts.RefCtrOffsets, pt.refCtr)
		refCtrs = refCtrs || pt.refCtr != 0
	}
	if !refCtrs {
		opts.RefCtrOffsets = nil
	}
	ex, err := link.OpenExecutable(g[0].obj.file)
	if err != nil {
		return err
	}
	attach := ex.UprobeMulti
	if g[0].ret {
		attach = ex.UretprobeMulti
	}
	l, err := attach(nil, prog, opts)
	if err != nil {
		what := "uprobes"
		if g[0].ret {
			what = "uretprobes"
		}
		return fmt.Errorf("attaching %d %s to %s: %w", len(g), what, g[0].obj.path, err)
	}
	a.add(l)
	return nil
}
