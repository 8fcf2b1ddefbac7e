//go:build !linux

package linux

// onFirstCPU does nothing where threads have no affinity to set.
func onFirstCPU() (restore func()) { return func() {} }
