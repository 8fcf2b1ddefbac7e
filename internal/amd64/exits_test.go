package amd64

import "slices"

// exitSites returns the return sites of the calls InlineCalls finds in
// one copy, entered where the edges say: the copy's exits on every
// path.
func exitSites(f *Function, copy []Range) ([]uint64, error) {
	calls, _, err := f.InlineCalls(copy, nil, nil)
	if err != nil {
		return nil, err
	}
	var sites []uint64
	for _, c := range calls {
		for _, x := range c.Exits {
			sites = append(sites, x.Addr)
		}
	}
	slices.Sort(sites)
	return slices.Compact(sites), nil
}

// exits returns the return sites of the one call of a copy entered at
// entry.
func exits(f *Function, copy []Range, entry uint64) ([]exit, error) {
	calls, _, err := f.InlineCalls(copy, nil, []uint64{entry})
	if err != nil || len(calls) == 0 {
		return nil, err
	}
	out := calls[0].Exits
	for i := range out {
		out[i].Leaves = false // not what these tests are about
	}
	return out, nil
}
