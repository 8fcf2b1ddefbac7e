//go:build !linux

package attach

import (
	"errors"

	"github.com/cilium/ebpf"
)

// TraceEvent attaches prog to a trace event's perf event; only Linux
// has them.
func TraceEvent(prog *ebpf.Program, system, event string) (*attachment, error) {
	return nil, errors.New("trace events need Linux's perf events")
}
