package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// optstring is dtrace's DTRACE_OPTSTR: the getopt specification that
// kdtrace accepts, so that dtrace command lines mean the same here.
const optstring = "3:6:aAb:Bc:CdD:ef:FGhHi:I:lL:m:n:o:Op:P:qs:SU:vVwx:X:Z"

// longOptions take an argument and have no dtrace equivalent: they name
// the kernel images the kinst rewrite reads offline, and the file of the
// kernel's types.
var longOptions = map[string]bool{"kernel": true, "module": true, "debug-root": true, "btf": true, "libxo": true}

// isStyle reports whether w is one of libxo's output styles, the words
// -O may take (-O json), as --libxo takes them; kdtrace writes json.
func isStyle(w string) bool {
	switch w {
	case "text", "xml", "json", "html":
		return true
	}
	return false
}

// opt is one parsed option: its letter (or long name) and argument.
type opt struct {
	name string
	arg  string
}

// usageError is a command-line error: exit status 2 after the usage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// errHelp is --help, which GNU-style users expect to print the usage
// on the standard output.
var errHelp = errors.New("help")

// errVersion is --version, which prints kdtrace's own version and
// commit on the standard output.
var errVersion = errors.New("version")

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
			switch a {
			case "--help":
				return nil, nil, errHelp
			case "--version":
				return nil, nil, errVersion
			}
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
				if c == 'O' {
					// dtrace's -O takes no argument; kdtrace's takes a
					// style when one follows (-O json, -Ojson).
					val := a[j+1:]
					switch {
					case val == "" && i+1 < len(args) && isStyle(args[i+1]):
						i++
						val = args[i]
					case !isStyle(val):
						val = ""
					}
					opts = append(opts, opt{"O", val})
					if val != "" {
						break
					}
					continue
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
func usage(w io.Writer, name string) {
	fmt.Fprintf(w, `Usage: %s [-32|-64] [-aABCdeFGhHlOqSvVwZ] [-b bufsz] [-c cmd] [-D name[=def]]
	[-I path] [-L path] [-o output] [-p pid] [-s script] [-U name]
	[-x opt[=val]] [-X a|c|s|t]
	[--kernel image] [--module image] [--debug-root dir] [--btf file|none]
	[--libxo json]

	[-P provider [[ predicate ] action ]]
	[-m [ provider: ] module [[ predicate ] action ]]
	[-f [[ provider: ] module: ] func [[ predicate ] action ]]
	[-n [[[ provider: ] module: ] func: ] name [[ predicate ] action ]]
	[-i probe-id [[ predicate ] action ]] [ args ... ]

	predicate -> '/' D-expression '/'
	   action -> '{' D-statements '}'

	-A  save the compiled program in the -o file, for -s to run (see kdtrace(1))
	-c  run specified command and exit upon its completion
	-C  run cpp(1) preprocessor on script files
	-d  dump script after syntactic transformations
	-D  define symbol when invoking preprocessor
	-e  exit after compiling request but prior to enabling probes
	-f  enable or list probes matching the specified function name
	-F  coalesce trace output by function
	-G  generate an ELF file containing embedded dtrace program
	-h  generate a header file with definitions for static probes
	-H  print included files when invoking preprocessor
	-i  enable or list probes matching the specified probe id
	-I  add include directory to preprocessor search path
	-l  list probes matching specified criteria
	-L  add library directory to library search path
	-m  enable or list probes matching the specified module name
	-n  enable or list probes matching the specified probe name
	-o  set output file
	-O  structured output: JSON Lines (-O json, --libxo json)
	-p  look up the specified process-ID and make it $target
	-P  enable or list probes matching the specified provider name
	-q  set quiet mode (only output explicitly traced data)
	-s  enable or list probes according to the specified D script
	-S  print D compiler intermediate code
	-U  undefine symbol when invoking preprocessor
	-v  set verbose mode (report stability attributes, arguments)
	-V  report DTrace API version (and kdtrace's version and commit)
	-w  permit destructive actions
	-x  enable or modify compiler and tracing options
	-X  specify ISO C conformance settings for preprocessor
	-Z  permit probe descriptions that match zero probes

	--kernel      kernel image whose inline functions kinst probes name
	--module      kernel module image (repeatable)
	--debug-root  where separate debug files are (default /usr/lib/debug)
	--btf         the kernel's types: a BTF file, or none (default: the --kernel
	              image's .BTF, else /sys/kernel/btf/vmlinux)
	--libxo json  structured output: JSON Lines, as -O (see kdtrace(1))
	--help        print this usage on the standard output
	--version     print kdtrace's version and the commit it was built from
`, name)
}
