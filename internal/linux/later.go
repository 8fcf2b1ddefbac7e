package linux

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/ringbuf"

	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/internal/linux/attach"
	"github.com/kdtrace/kdtrace/internal/probe"
	"github.com/kdtrace/kdtrace/record"
)

// watchRing is the bytes of the ring buffer of the processes stopped,
// a power of 2 pages: room for some four thousand at once.
const watchRing = 64 << 10

// laterRoom is how many probes more each uprobe program of a tracing
// that follows processes takes from the objects they map later.
const laterRoom = 1 << 16

// later follows the processes a tracing's pid and USDT probes are in,
// as dtrace follows them through their run-time linker's events
// (dt_proc_rdevent): when one has mapped or unmapped objects (dlopen,
// dlclose), the ECBs whose descriptions may match probes of those
// processes are enabled on the probes of the objects mapped since, with
// EPIDs of their own, and the probes of the objects unmapped are
// detached. Nothing already attached is touched.
//
// It learns of the linker's changes from a uprobe of its own on each
// process's _dl_debug_state, the function the linker calls once its
// list of objects is consistent again, for debuggers. The uprobe's
// program stops the process (SIGSTOP) and tells the consumer, which
// enables what the process now maps and sets it running again
// (SIGCONT), so that the probes are in place before the code of a
// library dlopen()ed runs.
type later struct {
	cat *probe.Catalog
	pl  *placer

	ecbs    []laterECB
	epids   map[ecbProbe]uint32    // the EPID of each ECB enabled on each probe
	named   map[uint32]bool        // the probes whose names are set
	objects map[objKey][]io.Closer // the attachments of each object's probes
	// execs is set when a description matched no probe and may match
	// those of a process started later: each process kdtrace's
	// descendants exec is stopped at its exec, to be grabbed.
	execs bool
	known map[int]bool // the processes grabbed

	prog     *ebpf.Program // on _dl_debug_state
	execProg *ebpf.Program // on sched_process_exec
	watching []io.Closer   // their attachments
	ring     *ebpf.Map
	reader   *ringbuf.Reader
	events   chan int // the processes stopped, by ID
	done     chan struct{}

	mu      sync.Mutex
	stopped map[int]bool // processes stopped whose event is not handled
}

// A laterECB is an ECB whose description may match probes made later.
type laterECB struct {
	ecb    *enabling.ECB
	desc   probe.Desc
	layout *record.ECBLayout
}

type ecbProbe struct {
	ecb *enabling.ECB
	id  uint32
}

// An objKey is an object one process maps.
type objKey struct {
	pid  int
	path string
}

func newLater(cat *probe.Catalog, pl *placer) *later {
	return &later{cat: cat, pl: pl, epids: map[ecbProbe]uint32{}, named: map[uint32]bool{},
		objects: map[objKey][]io.Closer{}, stopped: map[int]bool{}, known: map[int]bool{}}
}

// active reports whether some ECB may be enabled on probes made later.
func (l *later) active() bool { return len(l.ecbs) > 0 }

// reserve puts ECB e's clause in the programs of the pid and USDT
// probes its description may match later, whether or not a probe
// matched now has put it there; eps are the probes it was enabled on.
func (l *later) reserve(lay *record.Layout, e *enabling.ECB, eps []*record.EProbe) error {
	d := probe.Desc{Provider: e.Probe.Provider, Module: e.Probe.Module, Function: e.Probe.Function, Name: e.Probe.Name}
	entry, ret, usdt := l.cat.Later(d)
	if _, literal := probe.NewPattern(d.Provider).Literal(); len(eps) == 0 && !literal {
		// -Z: a glob may match the USDT provider of a process
		// started later.
		usdt, l.execs = true, true
	}
	if !entry && !ret && !usdt {
		return nil
	}
	var ep *record.EProbe
	if len(eps) > 0 {
		ep = eps[0]
	} else {
		el, err := lay.ECB(e, record.Probe{Provider: d.Provider, Module: d.Module, Function: d.Function, Name: d.Name})
		if err != nil {
			return err
		}
		ep = &record.EProbe{ECBLayout: el}
	}
	l.ecbs = append(l.ecbs, laterECB{ecb: e, desc: d, layout: ep.ECBLayout})
	for _, r := range []struct {
		want bool
		kind probe.Kind
		name string
		ctx  bpf.Context
	}{
		{entry, probe.KindUser, "pid-entry", bpf.CtxEntry},
		{ret, probe.KindUser, "pid-return", bpf.CtxReturn},
		{usdt, probe.KindUSDT, "usdt", bpf.CtxUSDT},
	} {
		if !r.want {
			continue
		}
		l.pl.kind = r.kind
		g := l.pl.group(r.name, r.ctx)
		if _, ok := g.ecbs[e]; !ok {
			g.ecbs[e] = len(g.clauses)
			g.clauses = append(g.clauses, bpf.Clause{ECB: e, EP: ep})
		}
	}
	return nil
}

// attachUser attaches a pid group's sites at Enable, the sites of each
// object apart, so that they can be detached when it is unmapped.
func (l *later) attachUser(g *group, idx []uint64) error {
	for k, is := range byObject(idx, func(i uint64) objKey { return objKey{g.users[i].PID, g.users[i].Path} }) {
		sites := make([]*probe.UserSite, len(is))
		for j, i := range is {
			sites[j] = g.users[i]
		}
		a, err := attach.Uprobes(g.prog, sites, is)
		if err != nil {
			return err
		}
		l.objects[k] = append(l.objects[k], a)
	}
	return nil
}

// attachUSDT is attachUser for a USDT group.
func (l *later) attachUSDT(g *group, idx []uint64) error {
	for k, is := range byObject(idx, func(i uint64) objKey {
		if s := g.usdt[i]; !s.AnyProcess {
			return objKey{s.PID, s.Path}
		}
		return objKey{0, g.usdt[i].Path}
	}) {
		sites := make([]*probe.USDTSite, len(is))
		for j, i := range is {
			sites[j] = g.usdt[i]
		}
		a, err := attach.USDT(g.prog, sites, is)
		if err != nil {
			return err
		}
		l.objects[k] = append(l.objects[k], a)
	}
	return nil
}

// byObject sorts a group's site indexes by the object they are in.
func byObject(idx []uint64, obj func(uint64) objKey) map[objKey][]uint64 {
	m := map[objKey][]uint64{}
	for _, i := range idx {
		k := obj(i)
		m[k] = append(m[k], i)
	}
	return m
}

// watch attaches the programs that report the run-time linker's
// changes in the processes grabbed and, when descriptions may match
// the probes of processes started later, the execs of kdtrace's
// descendants; and starts reading their reports. A kernel whose
// struct task_struct cannot be read has the execs not followed, as
// note says.
func (l *later) watch(note func(string)) error {
	if !l.active() {
		return nil
	}
	var err error
	l.ring, err = ebpf.NewMap(&ebpf.MapSpec{Name: "kd_watch", Type: ebpf.RingBuf, MaxEntries: watchRing})
	if err != nil {
		return fmt.Errorf("the ring buffer of the run-time linker's events: %w", err)
	}
	l.prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{Name: "kdt_rtld", Type: ebpf.Kprobe, AttachType: attach.UprobeAttachType(),
		License: "GPL", Instructions: bpf.RtldWatch(l.ring)})
	if err != nil {
		return fmt.Errorf("loading the program of the run-time linker's events: %w", err)
	}
	for _, pid := range l.cat.Processes() {
		if err := l.watchRtld(pid); err != nil {
			return err
		}
	}
	if l.execs {
		if insns, err := bpf.ExecWatch(l.ring, uint32(os.Getpid())); err != nil {
			note(fmt.Sprintf("the USDT probes of processes started later are not followed: %v", err))
		} else {
			l.execProg, err = ebpf.NewProgram(&ebpf.ProgramSpec{Name: "kdt_exec", Type: ebpf.RawTracepoint, License: "GPL", Instructions: insns})
			if err != nil {
				return fmt.Errorf("loading the program of the processes' execs: %w", err)
			}
			a, err := attach.RawTracepoint(l.execProg, "sched_process_exec")
			if err != nil {
				return err
			}
			l.watching = append(l.watching, a)
		}
	}
	if l.reader, err = ringbuf.NewReader(l.ring); err != nil {
		return fmt.Errorf("reading the run-time linker's events: %w", err)
	}
	l.events = make(chan int)
	l.done = make(chan struct{})
	go l.read()
	return nil
}

// watchRtld attaches the program of the run-time linker's events to
// process pid's linker, if it has one (a static executable has none).
func (l *later) watchRtld(pid int) error {
	l.known[pid] = true
	s := l.cat.RtldSite(pid)
	if s == nil {
		return nil
	}
	a, err := attach.Uprobes(l.prog, []*probe.UserSite{s}, []uint64{0})
	if err != nil {
		return fmt.Errorf("probing the run-time linker of pid %d: %w", pid, err)
	}
	l.watching = append(l.watching, a)
	return nil
}

// read hands the processes stopped to Loaded's channel until the
// reader is closed.
func (l *later) read() {
	defer close(l.done)
	for {
		rec, err := l.reader.Read()
		if err != nil {
			if errors.Is(err, ringbuf.ErrFlushed) || errors.Is(err, ringbuf.ErrClosed) {
				return
			}
			continue
		}
		if len(rec.RawSample) < 4 {
			continue
		}
		pid := int(binary.NativeEndian.Uint32(rec.RawSample))
		l.mu.Lock()
		l.stopped[pid] = true
		l.mu.Unlock()
		l.events <- pid
	}
}

// close detaches what later attached, and sets running the processes
// stopped whose event was not handled.
func (l *later) close() error {
	var errs []error
	for _, c := range l.watching {
		errs = append(errs, c.Close())
	}
	l.watching = nil
	for k, cs := range l.objects {
		for _, c := range cs {
			errs = append(errs, c.Close())
		}
		delete(l.objects, k)
	}
	if l.reader != nil {
		// The programs are detached: the reader gives what it holds,
		// then ErrFlushed.
		errs = append(errs, l.reader.Flush())
		for draining := true; draining; {
			select {
			case pid := <-l.events:
				l.resume(pid)
			case <-l.done:
				draining = false
			}
		}
		errs = append(errs, l.reader.Close())
		l.reader = nil
	}
	l.mu.Lock()
	for pid := range l.stopped {
		syscall.Kill(pid, syscall.SIGCONT)
	}
	clear(l.stopped)
	l.mu.Unlock()
	for _, p := range []*ebpf.Program{l.prog, l.execProg} {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	if l.ring != nil {
		errs = append(errs, l.ring.Close())
	}
	return errors.Join(errs...)
}

// resume sets a process stopped at the linker's event running again.
func (l *later) resume(pid int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped[pid] {
		delete(l.stopped, pid)
		syscall.Kill(pid, syscall.SIGCONT)
	}
}

// Loaded returns the channel on which the processes stopped at their
// run-time linker's events arrive, for Reload; nil when no process is
// followed.
func (t *Tracing) Loaded() <-chan int { return t.later.events }

// Reload enables the ECBs on the probes of the objects process pid maps
// now, stopped at its run-time linker's event or at its exec, detaches
// the probes of the objects it no longer maps, and sets it running
// again. A process that exited meanwhile has nothing to enable.
func (t *Tracing) Reload(pid int) error {
	l := t.later
	defer l.resume(pid)
	if !l.known[pid] {
		// A process started since: its providers are made, and its
		// linker followed.
		if err := l.cat.Grab(pid); err != nil {
			return nil
		}
		if err := l.watchRtld(pid); err != nil {
			return err
		}
	} else if changed, err := l.cat.Refresh(pid); err != nil || !changed {
		return nil
	}
	mapped := map[string]bool{}
	for _, p := range l.cat.Objects(pid) {
		mapped[p] = true
	}
	var errs []error
	for k, cs := range l.objects {
		if k.pid == pid && !mapped[k.path] {
			for _, c := range cs {
				errs = append(errs, c.Close())
			}
			delete(l.objects, k)
		}
	}
	type batch struct {
		g   *group
		obj objKey
	}
	var order []batch
	batches := map[batch][]uint64{}
	type put struct {
		g   *group
		idx uint32
	}
	var puts []put
	walked := map[probe.Desc][]*probe.Probe{}
	for _, le := range l.ecbs {
		ps, ok := walked[le.desc]
		if !ok {
			if err := l.cat.Walk(le.desc, func(p *probe.Probe) bool { ps = append(ps, p); return true }); err != nil {
				errs = append(errs, err)
				continue
			}
			walked[le.desc] = ps
		}
		for _, p := range ps {
			obj, owner, ok := siteObject(p, le.desc.Provider)
			if !ok || owner != pid || l.objects[obj] != nil {
				continue // not of this process, or attached already
			}
			id := l.cat.ID(p)
			epid := l.epids[ecbProbe{le.ecb, id}]
			if epid == 0 {
				rp := record.Probe{ID: id, Provider: p.Provider, Module: p.Module, Function: p.Function, Name: p.Name}
				epid = t.layout.Extend(le.layout, []record.Probe{rp})[0].EPID
				l.epids[ecbProbe{le.ecb, id}] = epid
				if !l.named[id] {
					l.named[id] = true
					if err := t.rt.SetProbeNames(id, p.Provider, p.Module, p.Function, p.Name); err != nil {
						errs = append(errs, err)
					}
				}
			}
			pls, err := l.pl.place(p, le.desc.Provider)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, pl := range pls {
				g, idx := pl.g, pl.index
				c, ok := g.ecbs[le.ecb]
				if g.prog == nil || !ok {
					continue // no program of the kind has the clause
				}
				ent := g.entries[idx]
				if ent == nil {
					ent = &bpf.ProbeEntry{ID: id}
					g.entries[idx] = ent
				}
				for len(ent.EPIDs) <= c {
					ent.EPIDs = append(ent.EPIDs, 0)
				}
				ent.EPIDs[c] = epid
				puts = append(puts, put{g, idx})
				b := batch{g, obj}
				if _, ok := batches[b]; !ok {
					order = append(order, b)
				}
				batches[b] = append(batches[b], uint64(idx))
			}
		}
	}
	for _, u := range puts {
		if err := bpf.PutProbeEntry(u.g.probeMap, len(u.g.clauses), u.idx, *u.g.entries[u.idx]); err != nil {
			return errors.Join(append(errs, err)...)
		}
		if u.g.uargMap != nil {
			if err := bpf.PutUArgs(u.g.uargMap, u.idx, u.g.uargs[u.idx]); err != nil {
				return errors.Join(append(errs, err)...)
			}
		}
	}
	for _, b := range order {
		is := dedup(batches[b])
		var err error
		if b.g.ctx == bpf.CtxUSDT {
			err = l.attachUSDT(b.g, is)
		} else {
			err = l.attachUser(b.g, is)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", b.obj.path, err))
		}
	}
	return errors.Join(errs...)
}

// siteObject returns the object a pid or USDT probe is attached in,
// matched by a description of provider desc, and the process whose
// probe it is: the object's process is 0 for a USDT probe that fires in
// any process that maps its object.
func siteObject(p *probe.Probe, desc string) (obj objKey, owner int, ok bool) {
	switch d := p.Detail.(type) {
	case *probe.UserSite:
		return objKey{d.PID, d.Path}, d.PID, true
	case *probe.USDTSite:
		if usdtAnyProcess(p, d, desc) {
			return objKey{0, d.Path}, d.PID, true
		}
		return objKey{d.PID, d.Path}, d.PID, true
	}
	return objKey{}, 0, false
}

// dedup returns the indexes, each once, in their first order.
func dedup(is []uint64) []uint64 {
	seen := map[uint64]bool{}
	var out []uint64
	for _, i := range is {
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}
