// Package amd64 decodes x86-64 functions for the kinst provider: it says
// which offsets of a function are instruction boundaries, where kinst can
// place a probe, and where the calls of an inline function in it begin
// and end.
//
// The package works on plain bytes and addresses. It knows nothing of ELF
// or DWARF: the debuginfo package supplies the code of a caller function
// and its entry address, the code of its cold parts (gcc's f.cold, which
// the caller's DW_AT_ranges cover), the address ranges of an inline
// function's copies in it, and where the compiler recorded that calls
// begin (GCC's entry markers).
//
// # Data flow
//
//	code, addr, cold parts ──► NewFunction: Decode each part, then basic
//	                           blocks, edges, dominators, back edges
//	                                             │
//	      kinst::f:N ──► Function.CheckOffset ◄──┤ (and FtraceNOP, Refused)
//	copy ranges, markers ──► InlineCalls ◄───────┤ (kinst::f:entry, :return)
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
// the results of InlineCalls included; offsets from the entry appear only
// in CheckOffset, as kinst::f:N uses them.
//
// # Inline calls
//
// An inlined call has neither a call nor a ret. Optimised code peels,
// unrolls and versions the loops that hold it, duplicates it into the
// paths before a join, sinks and hoists parts of it out of loops, and
// interleaves it with the caller's code; one DWARF copy then stands for
// several calls, and one call for code in several places. InlineCalls
// works the calls out from the control flow of the code, with the
// compiler's entry markers where it has them. THE RULE:
//
// Entries. GCC records where each call begins, and duplicates that
// record with the code (see debuginfo.Set.EntryMarkers); each marker
// begins a call. Without markers (clang), a call begins at each edge
// into the copy's code from code that no part of the copy leads to
// along forward edges (back edges ignored), or along a loop back edge:
// the first instruction of the copy on each path into it, in each loop
// iteration. Such entries that lead to one another are one call entered
// at several points (tail merging jumps into the middle of a copy).
//
// Bodies. A call's body is the copies' code that forward edges reach
// from its entry before another marker, within the loop of the caller
// that holds the entry, leaving it only where the copy's own code does
// (an early exit, a call that never returns): a call in a loop ends with
// its iteration, and the code the compiler hoisted out of the loop or
// sank after it is no iteration's. Loops whose every instruction is the
// copies' are the inline function's own: they do not end a call.
//
// Returns. The call is in progress on the instructions from which its
// body can still be reached, without a back edge and without passing
// another call's entry. It returns on each edge out of them, on each
// back edge from them, and where one of them leaves the function (a ret,
// a jump to a return thunk, a tail call: the probe goes on that
// instruction). Otherwise the probe goes where the edge arrives. A site
// from which control runs straight on, without a branch, to another
// site is dropped: typically the move of the return value before the
// jump to the join point; the later site fires on that path as well.
//
// Guards. A return site that paths not running the call's entries also
// reach (the join after an if without an else, a common epilogue, a loop
// head entered first from above) is Shared, and an entry that a path
// from another entry of the same call reaches is in Repeat: the rewrite
// then marks the thread at the call's entries and counts a shared
// return only when marked, a repeated entry only when not. The marks
// make the counts exact, one entry and one return per call, whatever
// path the call takes.
//
// Doubts. Some shapes make a run of the code stand for several calls,
// or for none, and no placement of probes can count them: code of the
// copies in a loop that holds no entry (the loop's calls were merged
// into code outside it), calls folded into the caller's code in a loop
// without entries (the debug information's empty ranges), code of the
// copies no entry leads to in a loop that holds entries (a call begun
// before the loop's back edge and ended after it), a marker in a loop's
// latch before its test, an entry reached on a path that leaves
// without running any of the call's code, and, without markers, a
// copy's code coming back after the caller's on one path (one call
// split by the scheduler, or several unrolled: nothing tells which) or
// entered in its middle (tail merging may share it with code that is
// no call). InlineCalls reports each as
// a Doubt, for the compiler to warn.
//
// The graph's paths must be the code's: a call to a function that never
// returns (the caller names them, to NewFunctionNoReturn; kinst gives
// the kernel's, such as __stack_chk_fail) ends its path. Taken to fall
// through, it runs into whatever code the compiler put next, and a path
// invented that way from after a copy back into it hides the copy's
// return site (do_sendfile's fsnotify_access on Debian's 6.1 kernel).
//
// A kinst or uprobe probe fires before its instruction runs, so a probe
// on a conditional jump that leaves the function fires on both of its
// paths.
//
// # Limits
//
// Indirect jumps are resolved only by the orphan-block approximation
// described at Function. A call to a function that does not return is
// taken to return unless the caller says otherwise. A cold part not
// passed to NewFunction is outside the function: a jump into it counts
// as leaving. AMD XOP instructions are not decoded. A loop the compiler
// evaluated in closed form leaves no loop in the code: its calls are
// counted as one, and nothing in the code says so.
package amd64
