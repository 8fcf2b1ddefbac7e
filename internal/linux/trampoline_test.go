package linux

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// TestTrampolineGroups splits a kprobe group of three fbt probes as
// splitTrampolines does: two go on trampolines with the clauses that
// apply to them, one stays, and one comes back when its trampoline is
// refused.
func TestTrampolineGroups(t *testing.T) {
	ecbs := make([]enabling.ECB, 3)
	sites := []*probe.KernelSite{{Function: "a"}, {Function: "b"}, {Function: "c", Return: true}}
	g := &group{name: "fbt-entry", ctx: bpf.CtxEntry, ecbs: map[*enabling.ECB]int{}, kernel: sites,
		entries: map[uint32]*bpf.ProbeEntry{
			0: {ID: 10, EPIDs: []uint32{1, 0, 3}},
			1: {ID: 11, EPIDs: []uint32{0, 5}},
			2: {ID: 12, EPIDs: []uint32{7, 8, 9}},
		},
		index: map[string]uint32{"fbt::a:entry": 0, "fbt::b:entry": 1, "fbt::c:return": 2}}
	for i := range ecbs {
		g.ecbs[&ecbs[i]] = i
		g.clauses = append(g.clauses, bpf.Clause{ECB: &ecbs[i]})
	}
	// What a group serves: its context, sites, entries and the clauses,
	// by their ECBs' places in ecbs.
	type shape struct {
		Ctx     bpf.Context
		Sites   []string
		Entries map[uint32]bpf.ProbeEntry
		Clauses []int
		Index   map[string]uint32
	}
	shapeOf := func(g *group) shape {
		s := shape{Ctx: g.ctx, Entries: map[uint32]bpf.ProbeEntry{}, Index: g.index}
		for _, k := range g.kernel {
			s.Sites = append(s.Sites, kernelName(k))
		}
		for i, e := range g.entries {
			s.Entries[i] = *e
		}
		for _, c := range g.clauses {
			s.Clauses = append(s.Clauses, g.ecbs[c.ECB])
			if g.tramp != nil {
				s.Clauses[len(s.Clauses)-1] = g.tramp.from.ecbs[c.ECB]
			}
		}
		return s
	}

	a := g.trampolineGroup("fbt::a:entry", 0)
	c := g.trampolineGroup("fbt::c:return", 2)
	g.keep([]int{1})
	for _, tt := range []struct {
		g    *group
		want shape
	}{
		{a, shape{bpf.CtxFEntry, []string{"a"}, map[uint32]bpf.ProbeEntry{0: {ID: 10, EPIDs: []uint32{1, 3}}}, []int{0, 2}, map[string]uint32{"fbt::a:entry": 0}}},
		{c, shape{bpf.CtxFExit, []string{"c:return"}, map[uint32]bpf.ProbeEntry{0: {ID: 12, EPIDs: []uint32{7, 8, 9}}}, []int{0, 1, 2}, map[string]uint32{"fbt::c:return": 0}}},
		{g, shape{bpf.CtxEntry, []string{"b"}, map[uint32]bpf.ProbeEntry{0: {ID: 11, EPIDs: []uint32{0, 5}}}, []int{0, 1, 2}, map[string]uint32{"fbt::b:entry": 0}}},
	} {
		if diff := cmp.Diff(tt.want, shapeOf(tt.g)); diff != "" {
			t.Errorf("group %s (-want +got):\n%s", tt.g.name, diff)
		}
	}

	// a's trampoline refused: a is the kprobe group's again, with its
	// entry in the group's numbering of clauses.
	a.backOnKprobe()
	want := shape{bpf.CtxEntry, []string{"b", "a"},
		map[uint32]bpf.ProbeEntry{0: {ID: 11, EPIDs: []uint32{0, 5}}, 1: {ID: 10, EPIDs: []uint32{1, 0, 3}}},
		[]int{0, 1, 2}, map[string]uint32{"fbt::b:entry": 0, "fbt::a:entry": 1}}
	if diff := cmp.Diff(want, shapeOf(g)); diff != "" {
		t.Errorf("kprobe group after a's refusal (-want +got):\n%s", diff)
	}
}

func kernelName(s *probe.KernelSite) string {
	if s.Return {
		return s.Function + ":return"
	}
	return s.Function
}

// TestFunctionTrampoline moves the group of SDT sites at a function onto
// an fentry trampoline whole, and back when the kernel refuses it.
func TestFunctionTrampoline(t *testing.T) {
	ecbs := make([]enabling.ECB, 2)
	site := &probe.KernelSite{Module: "vmlinux", Function: "mutex_lock"}
	g := &group{name: fnGroup + "mutex_lock", kind: probe.KindSDT, ctx: bpf.CtxEntry, ecbs: map[*enabling.ECB]int{&ecbs[0]: 0, &ecbs[1]: 1},
		clauses: []bpf.Clause{{ECB: &ecbs[0]}, {ECB: &ecbs[1]}},
		kernel:  []*probe.KernelSite{site},
		entries: map[uint32]*bpf.ProbeEntry{0: {ID: 10, EPIDs: []uint32{1}}, 1: {ID: 11, EPIDs: []uint32{0, 2}}},
		index:   map[string]uint32{"lockstat:vmlinux::adaptive-acquire": 0, "test:vmlinux::second": 1},
		sites:   []bpf.Site{{Index: 0}, {Index: 1}}, rawArgs: 2}
	if !g.atFunction() {
		t.Fatalf("group %s is not at a function", g.name)
	}
	type shape struct {
		Name    string
		Ctx     bpf.Context
		Sites   []*probe.KernelSite
		Entries map[uint32]*bpf.ProbeEntry
		Clauses int
		Index   map[string]uint32
		Probes  []bpf.Site
		RawArgs int
		From    string
	}
	shapeOf := func(g *group) shape {
		s := shape{g.name, g.ctx, g.kernel, g.entries, len(g.clauses), g.index, g.sites, g.rawArgs, ""}
		if g.tramp != nil {
			s.From = g.tramp.from.name
		}
		return s
	}
	entries, index, sites := g.entries, g.index, g.sites
	tr := g.functionTrampoline()
	for _, tt := range []struct {
		g    *group
		want shape
	}{
		{tr, shape{"lockstat:vmlinux::adaptive-acquire, test:vmlinux::second at mutex_lock()", bpf.CtxFEntry, []*probe.KernelSite{site}, entries, 2, index, sites, 2, "fn:mutex_lock"}},
		{g, shape{"fn:mutex_lock", bpf.CtxEntry, nil, entries, 2, index, sites, 2, ""}},
	} {
		if diff := cmp.Diff(tt.want, shapeOf(tt.g)); diff != "" {
			t.Errorf("group %s (-want +got):\n%s", tt.g.name, diff)
		}
	}
	tr.backOnKprobe()
	// The group's maps, as they were: not added to.
	want := shape{"fn:mutex_lock", bpf.CtxEntry, []*probe.KernelSite{site},
		map[uint32]*bpf.ProbeEntry{0: {ID: 10, EPIDs: []uint32{1}}, 1: {ID: 11, EPIDs: []uint32{0, 2}}}, 2,
		map[string]uint32{"lockstat:vmlinux::adaptive-acquire": 0, "test:vmlinux::second": 1}, sites, 2, ""}
	if diff := cmp.Diff(want, shapeOf(g)); diff != "" {
		t.Errorf("kprobe group after the refusal (-want +got):\n%s", diff)
	}
}
