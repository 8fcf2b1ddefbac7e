//go:build !linux

package probe

// perfEventHas reports that this system counts no perf events: only
// Linux has them.
func perfEventHas(uint32, uint64) bool { return false }
