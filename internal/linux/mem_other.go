//go:build !linux

package linux

// MemLimit is 0, no limit, where the machine's memory is not known.
func MemLimit() uint64 { return 0 }
