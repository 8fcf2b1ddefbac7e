package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// optstring is dtrace's DTRACE_OPTSTR: the getopt specification that
// kdtrace accepts, so that dtrace command lines mean the same here.
const optstring = "3:6:aAb:Bc:CdD:ef:FGhHi:I:lL:m:n:o:Op:P:qs:SU:vVwx:X:Z"

// longOptions take an argument and have no dtrace equivalent: they name
// the kernel images the kinst rewrite reads offline.
var longOptions = map[string]bool{"kernel": true, "module": true, "debug-root": true}

// opt is one parsed option: its letter (or long name) and argument.
type opt struct {
	name string
	arg  string
}

// usageError is a command-line error: exit status 2 after the usage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// getopt splits args (without the program name) into options and
// operands as dtrace's getopt loop does: options and operands may be
// interleaved, flags may be combined (-qs script), and "--" ends the
// options. Long options --name=value or --name value are kdtrace's own.
func getopt(args []string) (opts []opt, operands []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, append(operands, args[i+1:]...), nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			if !longOptions[name] {
				return nil, nil, &usageError{fmt.Sprintf("illegal option -- %s", a[2:])}
			}
			if !hasVal {
				if i+1 == len(args) {
					return nil, nil, &usageError{fmt.Sprintf("option requires an argument -- %s", name)}
				}
				i++
				val = args[i]
			}
			opts = append(opts, opt{name, val})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				c := a[j]
				k := strings.IndexByte(optstring, c)
				if k < 0 || c == ':' {
					return nil, nil, &usageError{fmt.Sprintf("illegal option -- %c", c)}
				}
				if k+1 < len(optstring) && optstring[k+1] == ':' {
					val := a[j+1:]
					if val == "" {
						if i+1 == len(args) {
							return nil, nil, &usageError{fmt.Sprintf("option requires an argument -- %c", c)}
						}
						i++
						val = args[i]
					}
					opts = append(opts, opt{string(c), val})
					break
				}
				opts = append(opts, opt{string(c), ""})
			}
		default:
			operands = append(operands, a)
		}
	}
	return opts, operands, nil
}

// Option kinds, as dt_options.c's tables.
const (
	compileOpt = iota
	runtimeOpt
	dynamicOpt
)

// optionKinds lists every -x option dtrace knows; kdtrace adds
// kinstcompat.
var optionKinds = map[string]int{}

func init() {
	for _, n := range strings.Fields(`aggpercpu amin argref core cpp cpphdrs cpppath ctypes
		defaultargs dtypes debug define droptags empty encoding errtags evaltime incdir
		iregs kdefs knodefs late lazyload ldpath libdir linkmode linktype nolibs pgmax
		preallocate pspec setenv stdc strip syslibdir tree tregs udefs undef unodefs
		unsetenv verbose version zdefs kinstcompat`) {
		optionKinds[n] = compileOpt
	}
	for _, n := range strings.Fields(`aggsize bufsize bufpolicy bufresize cleanrate cpu
		destructive dynvarsize grabanon jstackframes jstackstrsize nspec specsize
		stackframes statusrate strsize ustackframes temporal`) {
		optionKinds[n] = runtimeOpt
	}
	for _, n := range strings.Fields(`agghist aggpack aggrate aggsortkey aggsortkeypos
		aggsortpos aggsortrev aggzoom flowindent quiet rawbytes stackindent switchrate`) {
		optionKinds[n] = dynamicOpt
	}
}

var (
	errBadName  = errors.New("Invalid option name")
	errBadValue = errors.New("Invalid value for specified option")
)

// options holds the -x options of a run, checked as dtrace_setopt checks
// them.
type options struct {
	values map[string]string
}

// set sets option name to value ("" when none was given).
func (o *options) set(name, value string) error {
	if _, ok := optionKinds[name]; !ok {
		return errBadName
	}
	if err := checkValue(name, value); err != nil {
		return err
	}
	if o.values == nil {
		o.values = make(map[string]string)
	}
	o.values[name] = value
	return nil
}

func (o *options) isSet(name string) bool {
	_, ok := o.values[name]
	return ok
}

// checkValue checks an option's value as far as its kind is known:
// sizes, counts, rates, and the enumerated policies.
func checkValue(name, value string) error {
	switch name {
	case "aggsize", "bufsize", "dynvarsize", "specsize", "strsize":
		if _, err := parseSize(value); err != nil {
			return errBadValue
		}
	case "cpu", "jstackframes", "jstackstrsize", "nspec", "stackframes", "ustackframes",
		"pgmax", "aggsortkeypos":
		if _, err := strconv.ParseUint(value, 0, 32); err != nil {
			return errBadValue
		}
	case "aggrate", "cleanrate", "statusrate", "switchrate":
		if _, err := parseRate(value); err != nil {
			return errBadValue
		}
	case "bufpolicy":
		if value != "ring" && value != "fill" && value != "switch" {
			return errBadValue
		}
	case "bufresize":
		if value != "auto" && value != "manual" {
			return errBadValue
		}
	case "linkmode":
		if value != "kernel" && value != "static" && value != "dynamic" {
			return errBadValue
		}
	case "stdc":
		if value != "a" && value != "c" && value != "s" && value != "t" {
			return errBadValue
		}
	}
	return nil
}

// parseSize parses a size such as 4m or 512k.
func parseSize(s string) (uint64, error) {
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
		return 0, errBadValue
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
		return 0, errBadValue
	}
	switch unit {
	case "", "hz", "ns", "nsec", "us", "usec", "ms", "msec", "s", "sec", "m", "min", "h", "hour", "d", "day":
		return n, nil
	}
	return 0, errBadValue
}
