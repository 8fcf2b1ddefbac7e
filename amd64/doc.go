// Package amd64 decodes x86-64 functions for the kinst provider: it says
// which offsets of a function are instruction boundaries, where kinst can
// place a probe, and where the return probes of an inline copy go.
//
// The package works on plain bytes and addresses. It knows nothing of ELF
// or DWARF: the debuginfo package supplies the code of a caller function
// and its entry address, the code of its cold parts (gcc's f.cold, which
// the caller's DW_AT_ranges cover), and the address ranges of each inline
// copy in it.
//
// # Data flow
//
//	code, addr, cold parts ──► NewFunction: Decode each part, then basic
//	                           blocks, edges, dominators, back edges
//	                                             │
//	      kinst::f:N ──► Function.CheckOffset ◄──┤ (and FtraceNOP, Refused)
//	copy ranges ──► Function.ExitSites ◄─────────┤ (kinst::f:return)
//	copy ranges ──► Function.CompatExitSites ◄───┘ (-x kinstcompat)
//
// Decode follows control flow from the entry with golang.org/x/arch's
// x86asm, behind a guard for the encodings x86asm silently mis-decodes
// (endbr64 at every entry of CET-enabled code, vzeroupper in every AVX
// function), then sweeps what no path reached, so that jump-table targets
// are decoded and data in text comes out as Data rather than derailing the
// decode. Its instruction boundaries are objdump's; a branch over a lock
// prefix into the rest of the instruction is accepted without making a
// boundary there, as the kernel's own check makes none. Addresses are absolute throughout,
// the results of ExitSites included; offsets from the entry appear only
// in CheckOffset, as kinst::f:N uses them.
//
// # Return sites
//
// An inlined call has no ret of its own. Its return probe must fire once
// each time control leaves the copy for good, on every path. THE RULE:
//
// Take each control-flow edge u→v where the instruction u is inside the
// copy and v is outside it. The edge is final when
//
//   - it is a loop back edge (v dominates u): a rotated loop ends the copy
//     on its latch, and the loop head outside the copy leads back in only
//     through that back edge; or
//   - no instruction of the copy can be reached from v along forward
//     edges (back edges ignored).
//
// A loop entered in its middle (gcc jumps into rotated loops) has no
// edge whose target dominates its source; there the retreating edges of
// the depth-first walk from the entry, to a block the walk is still in,
// count as back edges, so that every cycle has one. Where each loop has
// one entry the two are the same edges.
//
// For a final edge the probe goes on v. When u leaves the function (a
// ret, a jump to a return thunk, or a jump out of the function, which is a
// tail call) there is no v, and the probe goes on u itself. No list of
// thunks is needed: a direct jump to any address outside the function is
// treated alike, whether it reaches a return thunk, a retpoline thunk or
// another function.
//
// Optimised code interleaves the copy with the caller's code, so most
// ends of the copy's ranges are not exits: an edge to caller code that
// leads back into the copy is not a return. The rule works per
// instruction, not per block, since a range can end in the middle of a
// basic block. It covers early returns, copies split into several ranges
// and tail calls, which the reference's rule (CompatExitSites) misses.
//
// The graph's paths must be the code's: a call to a function that never
// returns (the caller names them, to NewFunctionNoReturn; kinst gives
// the kernel's, such as __stack_chk_fail) ends its path. Taken to fall
// through, it runs into whatever code the compiler put next, and a path
// invented that way from after a copy back into it hides the copy's
// return site (do_sendfile's fsnotify_access on Debian's 6.1 kernel).
//
// One refinement keeps the probe to one firing per path: a site from which
// control runs straight on, without a branch, to another site is dropped.
// It is typically the move of the return value before the jump to the
// join point where the other exits arrive; the later site fires on that
// path as well.
//
// A site at v can also be reached without running the copy: the join
// after an if without an else, a common epilogue, a loop head entered
// first from above. Exits reports, for each site, whether it can be
// reached from where the function is called, from another site or from
// itself without running the copy's entry; the pid rewrite then fires
// the return probe there only on threads its entry probe marked.
//
// Three consequences are worth knowing. A kinst probe fires before its
// instruction runs, so a probe on a conditional jump that leaves the
// function fires on both of its paths. A probe on the head of a loop
// whose latch ends the copy also fires when the loop is first entered.
// And when two exits merge only after a branch, both keep their probes
// and the path through both fires twice.
//
// # Limits
//
// Indirect jumps are resolved only by the orphan-block approximation
// described at Function. A call to a function that does not return is
// taken to return. A cold part not passed to NewFunction is outside the
// function: a jump into it counts as leaving. AMD XOP instructions are
// not decoded.
package amd64
