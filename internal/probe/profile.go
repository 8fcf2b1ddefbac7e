package probe

import (
	"strconv"
	"strings"
	"time"
)

// A Timer says when a profile or tick probe fires.
type Timer struct {
	// Tick is set for tick-N, which fires on one CPU; profile-N fires
	// on every CPU.
	Tick bool
	// Interval is the time between firings.
	Interval time.Duration
}

// minInterval is the shortest interval of a profile or tick probe,
// 200 µs (5000 Hz), as FreeBSD's and illumos's profile provider
// enforce: shorter ones do not exist.
const minInterval = 200 * time.Microsecond

// The probes the profile provider lists without being asked for them.
var (
	profileRates = []int{97, 199, 499, 997, 1999, 4001, 4999}
	profileTicks = []int{1, 10, 100, 500, 1000, 5000}
)

// profileUnit returns the multiplier of a suffix of profile-N and
// tick-N, lower case; 0 means a rate in hertz, and false a suffix that
// is none.
func profileUnit(unit string) (time.Duration, bool) {
	switch unit {
	case "ns", "nsec":
		return time.Nanosecond, true
	case "us", "usec":
		return time.Microsecond, true
	case "ms", "msec":
		return time.Millisecond, true
	case "s", "sec":
		return time.Second, true
	case "m", "min":
		return time.Minute, true
	case "h", "hour":
		return time.Hour, true
	case "d", "day":
		return 24 * time.Hour, true
	case "hz", "":
		return 0, true
	}
	return 0, false
}

// parseTimer parses the name of a profile or tick probe: profile-N or
// tick-N where N is a positive decimal number followed by an optional
// unit (ns nsec us usec ms msec s sec m min h hour d day hz, in any
// case; none means hz). It returns false for any other name and for
// intervals under MinInterval, which name no probe, following
// profile_provide.
func parseTimer(name string) (Timer, bool) {
	var t Timer
	rest, ok := strings.CutPrefix(name, "profile-")
	if !ok {
		if rest, ok = strings.CutPrefix(name, "tick-"); !ok {
			return Timer{}, false
		}
		t.Tick = true
	}
	i := len(rest)
	for i > 0 && !isDigit(rest[i-1]) {
		i--
	}
	digits, unit := rest[:i], rest[i:]
	if digits == "" {
		return Timer{}, false
	}
	n, err := strconv.ParseUint(digits, 10, 63)
	if err != nil || n == 0 {
		// Not all digits, or too large for hrtime_t.
		return Timer{}, false
	}
	mult, ok := profileUnit(strings.ToLower(unit))
	if !ok {
		return Timer{}, false
	}
	if mult == 0 {
		t.Interval = time.Second / time.Duration(n)
	} else {
		if n > uint64(1<<63-1)/uint64(mult) {
			return Timer{}, false // the interval overflows
		}
		t.Interval = time.Duration(n) * mult
	}
	if t.Interval < minInterval {
		return Timer{}, false
	}
	return t, true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// profileProvider is the profile provider: profile-N fires on every CPU
// and tick-N on one, every interval. Like dtrace's, it has a few probes
// listed from the start and makes any other on demand, when a
// description names it exactly.
type profileProvider struct {
	namedProbes
	// listed is set once the listed probes are made, when the provider
	// is first walked: a run that names no profile probe makes none.
	listed bool
}

// profile returns the profile provider.
func profile() provider {
	return &profileProvider{namedProbes: namedProbes{provider: "profile", parse: func(name string) (Detail, bool) {
		t, ok := parseTimer(name)
		return &t, ok
	}}}
}

func (*profileProvider) Name() string           { return "profile" }
func (*profileProvider) Attributes() attributes { return kernelAttr }

func (p *profileProvider) Probes(q *query, yield func(*Probe) bool) error {
	return p.walk(q, func() {
		if p.listed {
			return
		}
		p.listed = true
		for _, r := range profileRates {
			p.add("profile-" + strconv.Itoa(r))
		}
		for _, r := range profileTicks {
			p.add("tick-" + strconv.Itoa(r))
		}
	}, yield)
}
