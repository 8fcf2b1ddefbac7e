package linux

import (
	"errors"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/bpf"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// TestVerifierError checks how a program the kernel refuses is told:
// the verifier's refusal as such, with the last lines of its log but
// its statistics, naming the clause or the program of a chain refused.
func TestVerifierError(t *testing.T) {
	clause := func(fn string) bpf.Clause {
		return bpf.Clause{ECB: &enabling.ECB{Probe: dof.ProbeSpec{Provider: "syscall", Function: fn, Name: "entry"}}}
	}
	one := &group{name: "syscall-entry", clauses: []bpf.Clause{clause("read")}}
	four := &group{name: "syscall-entry", clauses: []bpf.Clause{clause("read"), clause("write"), clause("open"), clause("close")}}
	chain := []bpf.Link{{Lo: 0, Hi: 2}, {Lo: 2, Hi: 4}}
	refusal := &ebpf.VerifierError{Cause: unix.EACCES, Log: []string{
		"0: (bf) r6 = r1",
		"1: (79) r1 = *(u64 *)(r6 +0)",
		"2: (79) r2 = *(u64 *)(r1 +0)",
		"R1 invalid mem access 'scalar'",
		"processed 3 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 mark_read 0",
		"",
	}}
	const reason = "(-x verbose shows its log): 1: (79) r1 = *(u64 *)(r6 +0)\n\t2: (79) r2 = *(u64 *)(r1 +0)\n\tR1 invalid mem access 'scalar'"
	for _, c := range []struct {
		name  string
		g     *group
		links []bpf.Link
		err   error
		want  string
	}{
		{"clause", one, chain[:1], &bpf.LinkError{Err: refusal},
			"the kernel's BPF verifier refused the clause of syscall::read:entry " + reason},
		{"culprit", four, chain[:1], &clauseError{2, refusal},
			"the kernel's BPF verifier refused the clause of syscall::open:entry " + reason},
		{"program", four, chain[:1], &bpf.LinkError{Err: refusal},
			"the kernel's BPF verifier refused the program of syscall-entry (4 clauses) " + reason},
		{"chain", four, chain, &bpf.LinkError{Link: 1, Err: refusal},
			"the kernel's BPF verifier refused the program of clauses 3 to 4 of syscall-entry (4 clauses in 2 programs) " + reason},
		{"not the verifier", four, chain, &bpf.LinkError{Link: 1, Err: unix.ENOMEM},
			"loading the program of clauses 3 to 4 of syscall-entry (4 clauses in 2 programs): cannot allocate memory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := verifierError(c.g, c.links, c.err, false)
			if err.Error() != c.want {
				t.Errorf("got  %q\nwant %q", err, c.want)
			}
			if errors.Is(c.err, unix.ENOMEM) && !errors.Is(err, unix.ENOMEM) {
				t.Errorf("%v does not wrap its cause", err)
			}
		})
	}
}

// TestSiteOf checks the sites of the program of one clause alone, which
// culprit loads to find the clause refused: each site runs the clause,
// now the program's first, if it ran it, and a site of every clause
// still does.
func TestSiteOf(t *testing.T) {
	sites := []bpf.Site{{Index: 0, Clauses: []int{0, 2}}, {Index: 1, Clauses: []int{1}}, {Index: 2}}
	want := []bpf.Site{{Index: 0, Clauses: []int{0}}, {Index: 1, Clauses: []int{}}, {Index: 2}}
	if diff := cmp.Diff(want, siteOf(sites, 2)); diff != "" {
		t.Errorf("siteOf(clause 2) (-want +got):\n%s", diff)
	}
	if sites[0].Clauses[1] != 2 {
		t.Errorf("siteOf changed the program's sites: %v", sites)
	}
}
