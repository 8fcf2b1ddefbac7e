package main

import (
	"fmt"
	"strings"
)

// optstring is dtrace's DTRACE_OPTSTR: the getopt specification that
// kdtrace accepts, so that dtrace command lines mean the same here.
const optstring = "3:6:aAb:Bc:CdD:ef:FGhHi:I:lL:m:n:o:Op:P:qs:SU:vVwx:X:Z"

// longOptions take an argument and have no dtrace equivalent: they name
// the kernel images the kinst rewrite reads offline, and the file of the
// kernel's types.
var longOptions = map[string]bool{"kernel": true, "module": true, "debug-root": true, "btf": true}

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
