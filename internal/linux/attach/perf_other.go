//go:build !linux

package attach

import (
	"errors"

	"github.com/cilium/ebpf"
)

// PerfEvents attaches prog to a perf event on every CPU; only Linux has
// them.
func PerfEvents(prog *ebpf.Program, ev PerfEvent) (*attachment, error) {
	return nil, errors.New(ev.Name + ": perf events are Linux's")
}
