package bpf

import (
	"fmt"
	"maps"
	"runtime"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// A probe program of many clauses is split over a chain of programs,
// each running some of the clauses in order and calling the next by a
// tail call through MapChain: the verifier's work on one program grows
// as the square of its length (each instruction it rewrites moves the
// whole program, and its analysis of the stack's liveness walks a whole
// function again at each branch explored), so that a thousand clauses
// in one program take seconds to load, and 10,000 pass its limits,
// where short programs load in milliseconds each. A firing makes 33
// tail calls at most: past 34 programs of chainBudget instructions, the
// programs grow, and each runs its clauses in functions (groups) of
// about groupBudget instructions, which keep the liveness analysis's
// walks short. Their map lookups and reads of the CPU's number go
// through a function each (translator.helper), which the verifier does
// not inline at each call, moving the whole program each time.
//
// The function that runs the first group of the chain's first program
// readies the firing as a lone program does (the busy mark, the
// tracing's activity, the probe's index, which it leaves at StateIndex,
// its arguments, the record buffer's prefix, clause-locals and scratch
// memory), then runs its clauses. The others find the probe again from
// StateIndex and the record buffer of their CPU, and go on with theirs:
// everything else a firing keeps lives in the maps. A clause that stops
// the firing (exit()) ends it where it is, as in a lone program.

// chainBudget is the instructions of a probe program's clauses past
// which BuildChain splits them over a chain.
const chainBudget = 4096

// groupBudget is the instructions of the clauses of one function of a
// chain's program (builder.chained).
const groupBudget = 1024

// MaxChain is the most programs in a chain: a firing makes at most 33
// tail calls (the kernel's MAX_TAIL_CALL_CNT).
const MaxChain = 34

// A part is the clauses one program of a chain runs, p.Clauses[lo:hi],
// and its place in the chain of links programs.
type part struct {
	lo, hi       int
	place, links int
}

// A Link is one program of a chain: its code and the clauses it runs,
// ProbeProgram.Clauses[Lo:Hi] (of a program of sites, some of them at
// each of its sites).
type Link struct {
	Insns  asm.Instructions
	Lo, Hi int
}

// BuildChain returns the programs for p: the program BuildProbe builds
// if it is small, else a chain of programs among which its clauses are
// split, in order, each of about chainBudget instructions and no more
// than MaxChain programs. The first program is the one attached; each
// calls the next by its place in MapChain (LoadChain). A program of
// SDT sites is split as its units of work (siteUnits), its sites'
// evaluations and the clauses each runs; the programs of trampolines
// are not split.
func BuildChain(p *ProbeProgram, l *Layout) ([]Link, error) {
	b := newBuilder(p, l, part{hi: len(p.Clauses), links: 1})
	b.sizes = make([]int, len(p.Clauses))
	insns, err := b.build()
	if err != nil {
		return nil, err
	}
	sizes, units := b.sizes, []unit(nil)
	if len(p.Sites) > 0 {
		sizes, units = b.usizes, siteUnits(p)
	}
	if len(insns) <= chainBudget || len(sizes) < 2 || p.Context == CtxFEntry || p.Context == CtxFExit {
		return []Link{{Insns: relax(insns), Hi: len(p.Clauses)}}, nil
	}
	parts := split(sizes, chainBudget)
	links := make([]Link, len(parts))
	for i, pt := range parts {
		pb := newBuilder(p, l, pt)
		pb.firing = b.firing
		pb.units = units
		pb.groups = cut(sizes[pt.lo:pt.hi], pt.lo, groupBudget)
		insns, err := pb.build()
		if err != nil {
			return nil, err
		}
		links[i] = Link{Insns: relax(insns), Lo: pt.lo, Hi: pt.hi}
		if units != nil {
			links[i].Lo, links[i].Hi = clauseSpan(units[pt.lo:pt.hi])
		}
	}
	return links, nil
}

// clauseSpan returns the least range of clauses [lo, hi) that holds
// those units of sites run.
func clauseSpan(us []unit) (lo, hi int) {
	lo = -1
	for _, u := range us {
		if u.clause < 0 {
			continue
		}
		if lo < 0 || u.clause < lo {
			lo = u.clause
		}
		hi = max(hi, u.clause+1)
	}
	return max(lo, 0), hi
}

// split cuts clauses of the given sizes (in instructions) into the
// parts of a chain, in order: each of at most budget instructions but
// for a clause larger alone, the budget raised as little as makes them
// MaxChain at most.
func split(sizes []int, budget int) []part {
	total := 0
	for _, s := range sizes {
		total += s
	}
	parts := cut(sizes, 0, budget)
	if len(parts) > MaxChain {
		// The fewest parts of a budget only fall as it grows: the
		// least budget that makes MaxChain parts at most.
		lo, hi := max(budget, total/MaxChain), total
		for lo < hi {
			mid := lo + (hi-lo)/2
			if len(cut(sizes, 0, mid)) <= MaxChain {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		parts = cut(sizes, 0, lo)
	}
	for i := range parts {
		parts[i].place, parts[i].links = i, len(parts)
	}
	return parts
}

// cut cuts clauses of the given sizes, the first numbered first, into
// parts of at most budget instructions but for a clause larger alone.
func cut(sizes []int, first, budget int) []part {
	var parts []part
	lo, size := 0, 0
	for j, s := range sizes {
		if j > lo && size+s > budget {
			parts = append(parts, part{lo: first + lo, hi: first + j})
			lo, size = j, 0
		}
		size += s
	}
	return append(parts, part{lo: first + lo, hi: first + len(sizes)})
}

// A LinkError is a chain's program that could not be loaded: the
// verifier's refusal of it (an *ebpf.VerifierError) or another error.
type LinkError struct {
	Link int // its place in the chain
	Err  error
}

func (e *LinkError) Error() string { return e.Err.Error() }
func (e *LinkError) Unwrap() error { return e.Err }

// LoadChain loads the programs of a chain (BuildChain) as LoadProbe
// loads one, with the program array MapChain that holds each at its
// place; a lone program is loaded alone, with no array. It returns the
// programs, the first to attach, and the array, which must stay open
// while they run (the kernel empties a program array when the last of
// its descriptors is closed). The programs are loaded side by side:
// the kernel verifies a privileged program's load without holding off
// others. An error is a *LinkError.
func (r *Runtime) LoadChain(name string, ctx Context, links []Link, own map[string]*ebpf.Map, at ebpf.AttachType) ([]*ebpf.Program, *ebpf.Map, error) {
	if len(links) == 1 {
		prog, err := r.LoadProbe(name, ctx, links[0].Insns, own, at)
		if err != nil {
			return nil, nil, &LinkError{0, err}
		}
		return []*ebpf.Program{prog}, nil, nil
	}
	chain, err := ebpf.NewMap(&ebpf.MapSpec{Name: mapChain, Type: ebpf.ProgramArray, KeySize: 4, ValueSize: 4, MaxEntries: uint32(len(links))})
	if err != nil {
		return nil, nil, fmt.Errorf("bpf: creating a program array: %w", err)
	}
	mine := maps.Clone(own)
	mine[mapChain] = chain
	progs := make([]*ebpf.Program, len(links))
	errs := make([]error, len(links))
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(len(links), runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for i := range next {
				if progs[i], errs[i] = r.load(name, ctx, links[i].Insns, mine, at); errs[i] != nil {
					errs[i] = &LinkError{i, errs[i]}
				}
			}
		})
	}
	for i := range links {
		next <- i
	}
	close(next)
	wg.Wait()
	fail := func(err error) ([]*ebpf.Program, *ebpf.Map, error) {
		for _, p := range progs {
			if p != nil {
				p.Close()
			}
		}
		chain.Close()
		return nil, nil, err
	}
	for _, err := range errs {
		if err != nil {
			return fail(err)
		}
	}
	for i := 1; i < len(progs); i++ {
		if err := chain.Put(uint32(i), progs[i]); err != nil {
			return fail(&LinkError{i, fmt.Errorf("bpf: putting a program in its chain: %w", err)})
		}
	}
	return progs, chain, nil
}
