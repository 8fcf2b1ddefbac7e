//go:build !linux

package dtrace

// CheckPrivileges has nothing to check where kdtrace has no runtime:
// Enable reports that tracing is not supported.
func CheckPrivileges() error { return nil }
