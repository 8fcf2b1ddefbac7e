// Package progen generates random C programs whose inline functions
// count their own calls, to check kdtrace's pid entry and return probes
// of inlined functions against programs nobody hand-picked.
//
// Generate makes one program from a seed, the same program for the same
// seed. It has a few inline functions, static inline and some also
// always_inline, each of which adds one to its own global counter on
// entry (a plain unsigned long, as a user would write it: the compiler
// may hoist or merge the increments, the truth is the count the program
// prints). Their bodies have early returns, branches, switches, small
// loops and calls of the inline functions defined before them, some of
// them tail calls (never recursion among them). They are called from
// counted, while, do-while, goto and nested loops, loops with break,
// continue and return, loop conditions, if/else branches and switches,
// a bounded recursion, straight-line code, return statements, with their
// values used or not, and, for some, through a function pointer, which
// keeps an out-of-line copy. At exit the program prints every counter as
// "cnt NAME N" (see Counts).
//
// The inputs come from argv (Program.Args), so that nothing folds to a
// constant; loops are bounded so that a run takes milliseconds and makes
// at most a few tens of thousands of calls; arithmetic is unsigned,
// indices are masked and no divisor is zero, so that the program has no
// undefined behaviour at any optimization level. gcc 12 and clang 14
// build every program without a warning at -Wall -Wextra, -O1 to -O3.
package progen
