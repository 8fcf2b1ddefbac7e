//go:build !linux

package attach

import (
	"errors"
	"time"

	"github.com/cilium/ebpf"
)

// Profile attaches prog to a cpu-clock perf event on every CPU; only
// Linux has them.
func Profile(prog *ebpf.Program, interval time.Duration) (*attachment, error) {
	return nil, errors.New("profile probes need Linux's perf events")
}
