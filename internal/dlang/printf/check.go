package printf

import (
	"fmt"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/types"
)

// An Error is a format string or argument error. Messages are dtrace's,
// without the final newline.
type Error struct {
	Tag diag.Tag
	Msg string
	// Arg is the index of the argument at fault among the call's
	// arguments, or -1 when the call has too few for any to be. The
	// format is argument 0, blamed also for conversions that lack a
	// value; printa's keys and aggregated value are blamed on the
	// aggregation. Messages number arguments from 1: "argument #2" is
	// Arg 1.
	Arg int
}

func (e *Error) Error() string { return e.Msg }

func errorf(arg int, tag diag.Tag, format string, args ...any) *Error {
	return &Error{Tag: tag, Msg: fmt.Sprintf(format, args...), Arg: arg}
}

// An Action is the action whose call is checked.
type Action struct {
	// Name is the action as the call names it and messages quote it:
	// "printf", "printa", "system" or "freopen". CheckCall applies
	// printa's rules to "printa", and treats freopen's empty and "."
	// formats as dtrace does.
	Name string
	// Target says that a target process is set (-p or -c), which lets
	// %A take plain pointers and integers as addresses in it.
	Target bool
}

// An Arg is an argument of a call, as the checker sees it.
type Arg struct {
	Type types.Type
	// TypeName, if not empty, is how messages name the argument's type
	// where dtrace names the expression rather than its type
	// (dt_node_type_name): "aggregation" for @a, "userland int *", ….
	TypeName string
	// Const reports whether the argument is a string constant, whose
	// bytes are Value.
	Const bool
	Value string
	// Agg describes the aggregation the argument names (@a); nil when it
	// names none.
	Agg *Aggregation
}

// An Aggregation is an aggregation passed to printa.
type Aggregation struct {
	Name      string // without the '@', as dtrace names it
	Func      string // the aggregating function: "count", "sum", "quantize", …
	Keys      []Arg  // its keys' types (Type, TypeName), in order
	Undefined bool   // the program never assigns it
}

func (a *Arg) typeName() string {
	switch {
	case a.TypeName != "":
		return a.TypeName
	case a.Type == nil:
		return "<none>"
	}
	return a.Type.String()
}

// freopenRestore is the format that stands for freopen(""), which
// restores the original output; no file can be opened by that name.
const freopenRestore = "."

// CheckCall checks the arguments of a call of a printf-like action, the
// format first, and returns the parsed and checked format; for printa
// with no format, it returns nil and no error. The checks are dtrace's,
// in its order: the format must be a string constant, printa's other
// arguments must be defined aggregations with the same key types, and
// the format must parse and match the values it converts.
func CheckCall(a Action, args []Arg) (*Format, error) {
	if len(args) == 0 {
		// What dtrace's prototype check says first, before the action's.
		return nil, errorf(-1, diag.D_PROTO_LEN, "%s( ) prototype mismatch: 0 args passed, 1 expected", a.Name)
	}
	if a.Name == "printa" {
		return checkPrinta(a, args)
	}
	fa := &args[0]
	if !fa.Const {
		return nil, errorf(0, diag.D_PRINTF_ARG_FMT,
			"%s( ) argument #1 is incompatible with prototype:\n\tprototype: string constant\n\t argument: %s",
			a.Name, fa.typeName())
	}
	s := cString(fa.Value)
	if a.Name == "freopen" {
		if s == freopenRestore {
			return nil, errorf(0, diag.D_FREOPEN_INVALID, "%s( ) argument #1 cannot be \"%s\"", a.Name, freopenRestore)
		}
		if s == "" {
			s = freopenRestore
		}
	}
	f, err := Parse(s)
	if err != nil {
		return nil, err
	}
	if err := f.Check(a, args[1:]); err != nil {
		return nil, err
	}
	return f, nil
}

// checkPrinta is CheckCall for printa(format, @a, @b, …) and printa(@a, …).
func checkPrinta(a Action, args []Arg) (*Format, error) {
	first := 0 // the first aggregation
	if args[0].Const {
		first = 1
	}
	if len(args) <= first {
		return nil, errorf(-1, diag.D_PRINTA_PROTO, "%s( ) prototype mismatch: %d args passed, %d expected",
			a.Name, len(args), first+1)
	}
	var f *Format
	var proto *Aggregation
	for i := first; i < len(args); i++ {
		agg := args[i].Agg
		if agg == nil {
			return nil, errorf(i, diag.D_PRINTA_AGGARG,
				"%s( ) argument #%d is incompatible with prototype:\n\tprototype: aggregation\n\t argument: %s",
				a.Name, i+1, args[i].typeName())
		}
		if agg.Undefined {
			return nil, errorf(i, diag.D_PRINTA_AGGBAD, "undefined aggregation: @%s", agg.Name)
		}
		if proto == nil {
			proto = agg
		} else if err := matchKeys(i, proto, agg); err != nil {
			return nil, err
		}
		if first == 1 && f == nil {
			var err error
			if f, err = Parse(args[0].Value); err != nil {
				return nil, err
			}
			if err := f.check(a, agg.Keys, agg); err != nil {
				return nil, err
			}
		}
	}
	return f, nil
}

// cString returns s up to its first NUL byte, as C sees it.
func cString(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// Check checks the values that a printf-like action (printf, system,
// freopen) passes after its format, as dtrace does: each '*' takes an
// integer, each conversion one value of a type it prints, and there must
// be no values left over. It records in each conversion the printf(3)
// conversion chosen for its value (Conv.Out). Errors index values from
// 1: values[0] is the call's argument 1, after the format.
func (f *Format) Check(a Action, values []Arg) error {
	return f.check(a, values, nil)
}

// check is dt_printf_validate. With agg set, the format is printa's:
// values are agg's keys, %@ converts its value, and keys may be left
// over; the errors then blame the aggregation, argument 1.
func (f *Format) check(a Action, values []Arg, agg *Aggregation) error {
	if len(f.Convs) == 0 && f.Tail == "" {
		return errorf(0, diag.D_PRINTF_FMT_EMPTY, "%s( ) format string is empty", a.Name)
	}
	blame := func(j int) int { // the call argument that holds value j
		if agg != nil {
			return 1
		}
		return j + 1
	}
	j := 0 // values used
	for i := range f.Convs {
		c := &f.Convs[i]
		n := i + 1
		if c.Kind == Percent {
			c.Out = c.spec.ofmt
			continue
		}
		for _, dyn := range dynArgs {
			if c.Flags&dyn.flag == 0 {
				continue
			}
			if j == len(values) {
				return errorf(0, diag.D_PRINTF_DYN_PROTO,
					"%s( ) prototype mismatch: conversion #%d (%%%s) is missing a corresponding \"%s\" argument",
					a.Name, n, c.name(), dyn.text)
			}
			if v := &values[j]; !types.IsInteger(v.Type) {
				return errorf(blame(j), diag.D_PRINTF_DYN_TYPE,
					"%s( ) argument #%d is incompatible with conversion #%d prototype:\n\tconversion: %% %s %s\n\t prototype: int\n\t  argument: %s",
					a.Name, j+2, n, dyn.text, c.name(), v.typeName())
			}
			j++
		}

		var v *Arg
		var what string // v, as messages name it
		var at int      // the argument blamed for v
		switch {
		case c.Flags&AggValue != 0:
			if agg == nil {
				return errorf(0, diag.D_PRINTF_AGG_CONV,
					"%%@ conversion requires an aggregation and is not for use with %s( )", a.Name)
			}
			v = aggValue(agg.Func)
			what = "aggregating action"
			at = 1
		case j == len(values):
			return errorf(0, diag.D_PRINTF_ARG_PROTO,
				"%s( ) prototype mismatch: conversion #%d (%%%s) is missing a corresponding value argument",
				a.Name, n, c.name())
		default:
			v = &values[j]
			what = fmt.Sprintf("argument #%d", j+2)
			at = blame(j)
			j++
		}

		if !c.spec.ok(v.Type, a.Target) {
			return errorf(at, diag.D_PRINTF_ARG_TYPE,
				"%s( ) %s is incompatible with conversion #%d prototype:\n\tconversion: %%%s\n\t prototype: %s\n\t  argument: %s",
				a.Name, what, n, c.name(), c.spec.proto, v.typeName())
		}
		c.Out = outConv(c, v.Type)
	}
	if agg == nil && j < len(values) {
		return errorf(j+1, diag.D_PRINTF_ARG_EXTRA,
			"%s( ) prototype mismatch: only %d arguments required by this format string", a.Name, j)
	}
	return nil
}

// dynArgs are the '*' a conversion may have, in the order they take
// their values.
var dynArgs = [...]struct {
	flag flags
	text string
}{{DynWidth, "*"}, {DynPrec, ".*"}}

// outConv returns the printf(3) conversion that prints a value of type t
// for c: 64-bit integers get "ll" and long doubles "L", since the
// consumer passes them as such, and %d becomes %i or %u by t's
// signedness, which the consumer cannot tell from the record.
func outConv(c *Conv, t types.Type) string {
	out := c.spec.ofmt
	switch c.Kind {
	case Signed, Unsigned:
		if size(t) == 8 {
			out = "ll" + out
		}
	case Decimal:
		out = "u"
		if i, ok := types.Resolve(t).(*types.Int); ok && i.Signed {
			out = "i"
		}
		if size(t) == 8 {
			out = "ll" + out
		}
	case Float:
		if size(t) == 16 {
			out = "L" + out
		}
	}
	return out
}

// The types of printa's aggregated values: count() counts, the other
// functions' results are signed.
var (
	int64Value  = &Arg{Type: &types.Typedef{Module: "D", Name: "int64_t", Type: types.Long}}
	uint64Value = &Arg{Type: &types.Typedef{Module: "D", Name: "uint64_t", Type: types.ULong}}
)

func aggValue(fn string) *Arg {
	if fn == "count" {
		return uint64Value
	}
	return int64Value
}

// matchKeys checks that aggregation r, printa's argument i, has keys of
// the same number and types as l, the first one, so that they print as
// one table.
func matchKeys(i int, l, r *Aggregation) error {
	if len(l.Keys) != len(r.Keys) {
		return errorf(i, diag.D_PRINTA_AGGKEY,
			"printa( ): @%s and @%s do not have matching key signatures: @%s has %d key%s, @%s has %d key%s",
			l.Name, r.Name, l.Name, len(l.Keys), plural(len(l.Keys)), r.Name, len(r.Keys), plural(len(r.Keys)))
	}
	for k := range l.Keys {
		lk, rk := &l.Keys[k], &r.Keys[k]
		if !keyCompatible(lk.Type, rk.Type) {
			return errorf(i, diag.D_PRINTA_AGGPROTO,
				"printa( ): @%s[ ] key #%d is incompatible with @%s:\n%9s key #%d: %s\n%9s key #%d: %s",
				r.Name, k+1, l.Name, l.Name, k+1, lk.typeName(), r.Name, k+1, rk.typeName())
		}
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
