//go:build !linux

package probe

import (
	"errors"
	"runtime"
)

// ErrLiveUnsupported is Live's error where the catalog of the running
// system cannot be read yet. On FreeBSD it would come from /dev/dtrace
// (DTRACEIOC_PROBEMATCH and the providers' own lists); that is not
// written.
var ErrLiveUnsupported = errors.New("probe: listing the running system's probes is not supported on " + runtime.GOOS + " (on FreeBSD it needs /dev/dtrace, not yet supported)")

// Live returns ErrLiveUnsupported: the live catalog exists on Linux
// only. Offline catalogs work everywhere.
func Live(cfg Config) (*Catalog, error) {
	return nil, ErrLiveUnsupported
}
