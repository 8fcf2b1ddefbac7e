package dtrace

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrPrivileges is CheckPrivileges' answer to a process that may not
// trace: dtrace's words for EDT_ACCESS, then what Linux asks for.
var ErrPrivileges = errors.New("DTrace requires additional privileges: tracing needs root, or the capabilities CAP_BPF and CAP_PERFMON")

// CheckPrivileges reports whether the process may enable probes: loading
// BPF tracing programs needs CAP_BPF and attaching them CAP_PERFMON, or
// CAP_SYS_ADMIN for both (what kernels before 5.8, which have neither,
// ask). It reads the effective set, so that root whose capabilities a
// container dropped is refused as well. Compiling and listing need none
// of them.
func CheckPrivileges() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("reading the process's capabilities: %w", err)
	}
	eff := uint64(data[1].Effective)<<32 | uint64(data[0].Effective)
	has := func(c int) bool { return eff&(1<<c) != 0 }
	admin := has(unix.CAP_SYS_ADMIN)
	if (admin || has(unix.CAP_BPF)) && (admin || has(unix.CAP_PERFMON)) {
		return nil
	}
	return ErrPrivileges
}
