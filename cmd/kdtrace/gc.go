package main

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// The compiler allocates a few megabytes, most of them garbage once a
// program is compiled, and Go collects first at a 4 MB heap: for a
// script that names curlwpsinfo that one collection was a third of the
// run (10 ms of 29 on a loaded machine). Until the first collection, or
// until the programs are enabled if that comes first, the heap may grow
// to 32 MB; from then on a large compile and the tracing are collected
// as Go would.

// delayCollection raises the first collection's heap goal eightfold and
// returns the function that lowers it back, which the collection itself
// calls if it comes first.
func delayCollection() (restore func()) {
	old := debug.SetGCPercent(800)
	restore = sync.OnceFunc(func() { debug.SetGCPercent(old) })
	// A finalizer runs after the collection that finds its object
	// unreachable: the first.
	sentinel := new([8]*byte)
	runtime.SetFinalizer(sentinel, func(*[8]*byte) { restore() })
	return restore
}
