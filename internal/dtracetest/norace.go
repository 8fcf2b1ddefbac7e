//go:build !race

package dtracetest

// Race is set when the tests run under the race detector.
const Race = false
