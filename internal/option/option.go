// Package option knows dtrace's options (-x name=value and #pragma D
// option): their names, their kinds, and the syntax of their values,
// and holds the options of one run. Values are checked as
// dtrace_setopt checks them, so that a bad option fails the same way.
package option

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// kind says when an option takes effect, as dt_options.c's three tables.
type kind uint8

// The option kinds.
const (
	compile kind = iota // read by the compiler
	runtime             // read when tracing starts
	dynamic             // may change while tracing
)

// value is the syntax of an option's value.
type value uint8

const (
	anyValue   value = iota
	boolValue        // no value
	sizeValue        // 4m, 512k
	countValue       // an unsigned 32-bit number
	rateValue        // 10hz, 1ms
	enumValue        // one of a list
)

type info struct {
	kind   kind
	value  value
	enum   []string
	script bool // may be set by #pragma D option
	// printed is set for an option of the compiler's that the
	// consumer reads too: encoding, how strings print.
	printed bool
}

// lookup returns the option called name, and false if there is none.
// A switch, not a map, so that the table costs nothing at start-up.
func lookup(name string) (info, bool) {
	switch name {
	case "amin", "cpppath", "ctypes", "define", "dtypes", "evaltime", "incdir", "iregs", "ldpath", "libdir", "linktype", "pspec", "syslibdir", "tree", "tregs", "undef", "version":
		return info{kind: compile, value: anyValue, script: true}, true
	case "encoding":
		return info{kind: compile, value: anyValue, script: true, printed: true}, true
	case "aggpercpu", "argref", "core", "cpp", "cpphdrs", "debug", "defaultargs", "droptags", "empty", "errtags", "kdefs", "knodefs", "late", "lazyload", "nolibs", "preallocate", "strip", "udefs", "unodefs", "verbose", "zdefs", "kinstcompat":
		return info{kind: compile, value: boolValue, script: true}, true
	case "pgmax":
		return info{kind: compile, value: countValue, script: true}, true
	case "aggsize", "bufsize", "dynvarsize", "specsize", "strsize":
		return info{kind: runtime, value: sizeValue, script: true}, true
	case "cpu", "jstackframes", "jstackstrsize", "kinstmaxprobes", "nspec", "stackframes", "ustackframes":
		return info{kind: runtime, value: countValue, script: true}, true
	case "cleanrate", "statusrate":
		return info{kind: runtime, value: rateValue, script: true}, true
	case "destructive", "grabanon", "temporal":
		return info{kind: runtime, value: boolValue, script: true}, true
	case "aggrate", "switchrate":
		return info{kind: dynamic, value: rateValue, script: true}, true
	case "aggsortkeypos":
		return info{kind: dynamic, value: countValue, script: true}, true
	case "agghist", "aggpack", "aggsortkey", "aggsortpos", "aggsortrev", "aggzoom", "flowindent", "quiet", "rawbytes", "stackindent":
		return info{kind: dynamic, value: boolValue, script: true}, true
	case "bufpolicy":
		return info{kind: runtime, value: enumValue, enum: []string{"ring", "fill", "switch"}, script: true}, true
	case "bufresize":
		return info{kind: runtime, value: enumValue, enum: []string{"auto", "manual"}, script: true}, true
	case "linkmode":
		return info{kind: compile, value: enumValue, enum: []string{"kernel", "static", "dynamic"}, script: true}, true
	case "headerstyle":
		// kdtrace's own: the form of -h's probe macros (header.Style).
		return info{kind: compile, value: enumValue, enum: []string{"notes", "stubs"}, script: true}, true
	case "stdc":
		return info{kind: compile, value: enumValue, enum: []string{"a", "c", "s", "t"}, script: true}, true
	case "oformat":
		// The output's form: dtrace's text, or JSON Lines (-O, --libxo json).
		return info{kind: runtime, value: enumValue, enum: []string{"text", "json"}, script: true}, true
	case "setenv", "unsetenv":
		// The environment of processes dtrace starts is set before any
		// program is compiled, never by one.
		return info{kind: compile, value: anyValue}, true
	}
	return info{}, false
}

// The errors of setting an option, with dtrace's texts.
var (
	errName    = errors.New("Invalid option name")
	ErrValue   = errors.New("Invalid value for specified option")
	errContext = errors.New("Option cannot be used from within a D program")
)

// Set holds the options of a run.
type Set struct {
	values map[string]string
}

// Set sets option name to value ("" when none was given), from the
// command line.
func (s *Set) Set(name, value string) error {
	return s.set(name, value, false)
}

// SetFromScript sets an option as #pragma D option does.
func (s *Set) SetFromScript(name, value string) error {
	return s.set(name, value, true)
}

func (s *Set) set(name, value string, script bool) error {
	in, ok := lookup(name)
	if !ok {
		return errName
	}
	if script && !in.script {
		return errContext
	}
	if err := in.check(value); err != nil {
		return err
	}
	if in.value == boolValue && isFalse(strings.ToLower(value)) {
		delete(s.values, name)
		return nil
	}
	if s.values == nil {
		s.values = make(map[string]string)
	}
	s.values[name] = value
	return nil
}

// IsSet reports whether the option was set.
func (s *Set) IsSet(name string) bool {
	_, ok := s.values[name]
	return ok
}

// Value returns the option's value, and whether it was set.
func (s *Set) Value(name string) (string, bool) {
	v, ok := s.values[name]
	return v, ok
}

func (in info) check(v string) error {
	var err error
	switch in.value {
	case boolValue:
		if w := strings.ToLower(v); v != "" && !isTrue(w) && !isFalse(w) {
			err = ErrValue
		}
	case sizeValue:
		_, err = ParseSize(v)
	case countValue:
		_, err = strconv.ParseUint(v, 0, 32)
	case rateValue:
		_, err = parseRate(v)
	case enumValue:
		err = ErrValue
		for _, e := range in.enum {
			if v == e {
				err = nil
			}
		}
	}
	if err != nil {
		return ErrValue
	}
	return nil
}

// isTrue and isFalse report whether w is a word a boolean option may be
// given, as dtrace accepts them in any case, lower case.
func isTrue(w string) bool {
	switch w {
	case "yes", "true", "enable", "enabled", "on", "set":
		return true
	}
	return false
}

func isFalse(w string) bool {
	switch w {
	case "no", "false", "disable", "disabled", "off", "unset":
		return true
	}
	return false
}

// ParseSize parses a size such as 4m or 512k.
func ParseSize(s string) (uint64, error) {
	mult := uint64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult != 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseUint(s, 0, 64)
	if err != nil || n > ^uint64(0)/mult {
		return 0, ErrValue
	}
	return n * mult, nil
}

// parseRate parses a rate given as a frequency (10hz) or an interval
// with a unit (ns, us, ms, s, m, h, d; a bare number is in hertz).
func parseRate(s string) (uint64, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], s[i:]
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return 0, ErrValue
	}
	switch unit {
	case "", "hz", "ns", "nsec", "us", "usec", "ms", "msec", "s", "sec", "m", "min", "h", "hour", "d", "day":
		return n, nil
	}
	return 0, ErrValue
}

// ParseInterval parses a rate option's value (aggrate, switchrate) as
// the interval it gives: a bare number or one in hz is a frequency,
// one with a time unit an interval. A frequency of 0, as one too high
// for a whole nanosecond, is an interval of 0, as dt_opt_rate makes
// it: no wait at all.
func ParseInterval(s string) (time.Duration, error) {
	n, err := parseRate(s)
	if err != nil {
		return 0, err
	}
	unit := strings.TrimLeft(s, "0123456789")
	per := map[string]time.Duration{"ns": 1, "nsec": 1, "us": time.Microsecond, "usec": time.Microsecond,
		"ms": time.Millisecond, "msec": time.Millisecond, "s": time.Second, "sec": time.Second,
		"m": time.Minute, "min": time.Minute, "h": time.Hour, "hour": time.Hour, "d": 24 * time.Hour, "day": 24 * time.Hour}
	if d, ok := per[unit]; ok {
		return time.Duration(n) * d, nil
	}
	if n == 0 || n > uint64(time.Second) {
		return 0, nil
	}
	return time.Second / time.Duration(n), nil
}

// Setting is an option and its value.
type Setting struct{ Name, Value string }

// Runtime returns the options set that tracing or printing reads, not
// those only the compiler reads, sorted by name: what a saved program
// keeps.
func (s *Set) Runtime() []Setting {
	var r []Setting
	for n, v := range s.values {
		if in, _ := lookup(n); in.kind != compile || in.printed {
			r = append(r, Setting{n, v})
		}
	}
	slices.SortFunc(r, func(a, b Setting) int { return strings.Compare(a.Name, b.Name) })
	return r
}

// Clone returns a copy of s that changes apart from it.
func (s *Set) Clone() Set { return Set{values: maps.Clone(s.values)} }
