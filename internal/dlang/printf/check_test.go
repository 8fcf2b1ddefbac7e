package printf

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/types"
)

func typedef(name string, t types.Type) *types.Typedef {
	return &types.Typedef{Module: "D", Name: name, Type: t}
}

var (
	int64T  = typedef("int64_t", types.Long)
	uint64T = typedef("uint64_t", types.ULong)
	stringT = &types.String{Bytes: 256}
)

// testTypes are the argument types of the conversion matrix, by name.
var testTypes = map[string]types.Type{
	"char":               types.Char,
	"signed char":        types.SChar,
	"unsigned char":      types.UChar,
	"short":              types.Short,
	"unsigned short":     types.UShort,
	"int":                types.IntType,
	"unsigned int":       types.UInt,
	"long":               types.Long,
	"unsigned long":      types.ULong,
	"long long":          types.LongLong,
	"unsigned long long": types.ULongLong,
	"const long":         &types.Qualified{Qual: types.Const, Type: types.Long},
	"_Bool":              types.Bool,
	"enum e":             &types.Enum{Name: "e", Bytes: 4},
	"int64_t":            int64T,
	"uint64_t":           uint64T,
	"uint16_t":           typedef("uint16_t", types.UShort),
	"size_t":             typedef("size_t", types.ULong),
	"my64_t":             typedef("my64_t", int64T),
	"long int":           &types.Int{Name: "long int", Bytes: 8, Signed: true}, // as BTF names them
	"short unsigned int": &types.Int{Name: "short unsigned int", Bytes: 2},
	"float":              types.FloatType,
	"double":             types.Double,
	"long double":        types.LongDbl,
	"string":             stringT,
	"char [16]":          &types.Array{Elem: types.Char, Len: 16},
	"unsigned char [16]": &types.Array{Elem: types.UChar, Len: 16},
	// Linux's kernel is built with -funsigned-char: its BTF's char is
	// unsigned, and still char.
	"linux char [16]": &types.Array{Elem: &types.Int{Name: "char", Bytes: 1, Char: true}, Len: 16},
	"wchar_t [8]":     &types.Array{Elem: typedef("wchar_t", types.IntType), Len: 8},
	"void *":          types.VoidPtr,
	"char *":          &types.Pointer{Elem: types.Char},
	"struct s":        &types.Struct{Name: "s", Bytes: 8},
	"stack":           types.Stack,
	"_symaddr":        types.SymAddr,
	"_usymaddr":       types.USymAddr,
	"<DYN>":           types.Dyn,
	"void":            types.Void{},
}

// Sets of testTypes names.
var (
	integers = []string{"char", "signed char", "unsigned char", "short", "unsigned short",
		"int", "unsigned int", "long", "unsigned long", "long long", "unsigned long long",
		"const long", "_Bool", "enum e", "int64_t", "uint64_t", "uint16_t", "size_t", "my64_t",
		"long int", "short unsigned int"}
	smallInts = []string{"char", "signed char", "unsigned char", "short", "unsigned short",
		"int", "unsigned int", "_Bool", "enum e", "uint16_t", "short unsigned int"}
	bigInts = []string{"long", "unsigned long", "long long", "unsigned long long", "const long",
		"int64_t", "uint64_t", "size_t", "my64_t", "long int"}
	floats   = []string{"float", "double", "long double"}
	pointers = []string{"void *", "char *", "char [16]", "unsigned char [16]", "linux char [16]", "wchar_t [8]"}
	strs     = []string{"string", "char [16]", "linux char [16]"}
)

func join(sets ...[]string) []string {
	var all []string
	for _, s := range sets {
		all = append(all, s...)
	}
	return all
}

// TestCheckTypes checks each conversion against every test type: the
// ones listed are accepted, the others refused with D_PRINTF_ARG_TYPE.
func TestCheckTypes(t *testing.T) {
	tests := []struct {
		convs  string
		target bool
		ok     []string
	}{
		{"d i o u x X", false, integers},
		{"c C", false, smallInts},
		{"e E f g G", false, floats},
		{"Le LE Lf Lg LG", false, []string{"long double"}},
		{"hd hi", false, []string{"short"}},
		{"ho hu P", false, []string{"unsigned short", "uint16_t", "short unsigned int"}},
		{"hx hX", false, []string{"short", "unsigned short", "uint16_t", "short unsigned int"}},
		{"lc wc", false, []string{"int"}},
		{"ld li", false, []string{"long", "const long", "int64_t", "my64_t", "long int"}},
		{"lo lu", false, []string{"unsigned long", "uint64_t", "size_t"}},
		{"lx lX", false, []string{"long", "unsigned long", "const long", "int64_t", "uint64_t",
			"size_t", "my64_t", "long int"}},
		{"lld lli", false, []string{"long long"}},
		{"llo llu", false, []string{"unsigned long long"}},
		{"llx llX", false, []string{"long long", "unsigned long long", "int64_t", "uint64_t", "my64_t"}},
		{"ls ws", false, []string{"wchar_t [8]"}},
		{"s S I", false, strs},
		{"k", false, []string{"stack"}},
		{"a", false, join(integers, pointers, []string{"_symaddr"})},
		{"p", false, join(integers, pointers)},
		{"A", false, []string{"_usymaddr"}},
		{"A", true, join(integers, pointers, []string{"_usymaddr"})},
		{"T Y", false, bigInts},
	}
	names := make([]string, 0, len(testTypes))
	for name := range testTypes {
		names = append(names, name)
	}
	sort.Strings(names)
	tested := map[string]bool{"%": true}
	for _, tt := range tests {
		ok := map[string]bool{}
		for _, name := range tt.ok {
			if testTypes[name] == nil {
				t.Fatalf("no test type %q", name)
			}
			ok[name] = true
		}
		for _, conv := range strings.Fields(tt.convs) {
			tested[conv] = true
			for _, name := range names {
				f, err := Parse("%" + conv)
				if err != nil {
					t.Fatal(err)
				}
				err = f.Check(Action{Name: "printf", Target: tt.target}, []Arg{{Type: testTypes[name]}})
				switch {
				case ok[name] && err != nil:
					t.Errorf("%%%s (target %v) refused %s: %v", conv, tt.target, name, err)
				case !ok[name] && err == nil:
					t.Errorf("%%%s (target %v) accepted %s", conv, tt.target, name)
				case !ok[name] && err.(*Error).Tag != diag.D_PRINTF_ARG_TYPE:
					t.Errorf("%%%s refused %s with %v, want D_PRINTF_ARG_TYPE", conv, name, err)
				}
			}
		}
	}
	for _, s := range specs {
		if name := s.name; !tested[name] {
			t.Errorf("conversion %%%s not tested", name)
		}
	}
}

// TestCheckOut checks the printf(3) conversions chosen for values and
// the format dtrace records.
func TestCheckOut(t *testing.T) {
	tests := []struct {
		format string
		args   []types.Type
		want   string
	}{
		{"%d", []types.Type{types.IntType}, "%i"},
		{"%d", []types.Type{types.UInt}, "%u"},
		{"%d", []types.Type{types.Char}, "%i"},
		{"%d", []types.Type{types.UChar}, "%u"},
		{"%d", []types.Type{&types.Enum{Name: "e", Bytes: 4}}, "%u"}, // enums are not signed to dtrace
		{"%d", []types.Type{types.Long}, "%lli"},
		{"%d", []types.Type{uint64T}, "%llu"},
		{"%5d|%-5d", []types.Type{types.Short, types.Short}, "%5i|%-5i"},
		{"%i %u %x %o", []types.Type{types.IntType, types.Long, types.ULong, types.Char}, "%i %llu %llx %o"},
		{"%p", []types.Type{types.VoidPtr}, "%llx"},
		{"%p", []types.Type{types.UInt}, "%x"},
		{"%c", []types.Type{types.Char}, "%c"},
		{"%hd %hx", []types.Type{types.Short, types.UShort}, "%d %x"},
		{"%ld %lu %lx", []types.Type{types.Long, types.ULong, types.Long}, "%lld %llu %llx"},
		{"%lld %llx", []types.Type{types.LongLong, int64T}, "%lld %llx"},
		{"%lc %wc", []types.Type{types.IntType, types.IntType}, "%lc %lc"},
		{"%ls %ws", []types.Type{testTypes["wchar_t [8]"], testTypes["wchar_t [8]"]}, "%ls %ls"},
		{"%e %f %g", []types.Type{types.FloatType, types.Double, types.LongDbl}, "%e %f %Lg"},
		{"%Lf", []types.Type{types.LongDbl}, "%Lf"},
		{"%s %S %a %Y %T %k %P %I %C", []types.Type{stringT, stringT, types.VoidPtr, int64T, int64T,
			types.Stack, types.UShort, stringT, types.Char}, "%s %S %a %Y %T %k %P %I %C"},
		{"%*.*s|%.*d", []types.Type{types.IntType, types.IntType, stringT, types.IntType, types.Long}, "%*.*s|%.*lli"},
		{"%08.3f%%\n", []types.Type{types.Double}, "%08.3f%%\n"},
		{"hello", nil, "hello"},
	}
	for _, tt := range tests {
		f, err := Parse(tt.format)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.format, err)
		}
		var args []Arg
		for _, a := range tt.args {
			args = append(args, Arg{Type: a})
		}
		if err := f.Check(Action{Name: "printf"}, args); err != nil {
			t.Errorf("Check(%q): %v", tt.format, err)
			continue
		}
		if got := f.String(); got != tt.want {
			t.Errorf("Check(%q) then String() = %q, want %q", tt.format, got, tt.want)
		}
	}
}

// TestCheckPrintaOut checks the conversions chosen for printa's keys and
// aggregated values: count() is unsigned, the others signed.
func TestCheckPrintaOut(t *testing.T) {
	tests := []struct {
		format string
		fn     string
		keys   []types.Type
		want   string
	}{
		{"%@d\n", "count", nil, "%@llu\n"},
		{"%@d\n", "sum", nil, "%@lli\n"},
		{"%@10u %d", "avg", []types.Type{types.IntType}, "%@10llu %i"},
		{"%s %@d %d", "quantize", []types.Type{stringT, types.Long, types.IntType}, "%s %@lli %lli"},
	}
	for _, tt := range tests {
		agg := &Aggregation{Name: "a", Func: tt.fn}
		for _, k := range tt.keys {
			agg.Keys = append(agg.Keys, Arg{Type: k})
		}
		f, err := CheckCall(Action{Name: "printa"}, []Arg{
			{Type: stringT, Const: true, Value: tt.format},
			{Type: types.Dyn, Agg: agg},
		})
		if err != nil {
			t.Errorf("printa(%q): %v", tt.format, err)
			continue
		}
		if got := f.String(); got != tt.want {
			t.Errorf("printa(%q) format = %q, want %q", tt.format, got, tt.want)
		}
	}
}

func str(s string) Arg { return Arg{Type: stringT, Const: true, Value: s} }

func val(t types.Type) Arg { return Arg{Type: t} }

func agg(name, fn string, keys ...types.Type) Arg {
	a := &Aggregation{Name: name, Func: fn}
	for _, k := range keys {
		a.Keys = append(a.Keys, Arg{Type: k})
	}
	return Arg{Type: types.Dyn, TypeName: "aggregation", Agg: a}
}

// TestCheckCall checks calls with dtrace's messages, most of them the
// test suite's err.D_PRINTF_* and err.D_PRINTA_* programs.
func TestCheckCall(t *testing.T) {
	undefined := agg("u", "count")
	undefined.Agg.Undefined = true
	tests := []struct {
		name   string
		action string
		args   []Arg
		tag    diag.Tag
		arg    int
		msg    string
	}{
		{"hello", "printf", []Arg{str("hello world\n")}, 0, 0, ""},
		{"values", "printf", []Arg{str("%d %s %p\n"), val(types.IntType), val(stringT), val(types.VoidPtr)}, 0, 0, ""},
		{"widths", "printf", []Arg{str("%*.*s\n"), val(types.IntType), val(types.Long), val(stringT)}, 0, 0, ""},
		{"system", "system", []Arg{str("echo %d"), val(types.IntType)}, 0, 0, ""},
		{"freopen", "freopen", []Arg{str("/tmp/%s.out"), val(stringT)}, 0, 0, ""},
		{"freopen.restore", "freopen", []Arg{str("")}, 0, 0, ""},

		{"D_PROTO_LEN", "printf", nil, diag.D_PROTO_LEN, -1,
			"printf( ) prototype mismatch: 0 args passed, 1 expected"},
		{"D_PRINTF_ARG_FMT.badfmt", "printf", []Arg{val(types.IntType)}, diag.D_PRINTF_ARG_FMT, 0,
			"printf( ) argument #1 is incompatible with prototype:\n\tprototype: string constant\n\t argument: int"},
		{"D_PRINTF_ARG_FMT.variable", "system", []Arg{val(stringT), val(types.IntType)}, diag.D_PRINTF_ARG_FMT, 0,
			"system( ) argument #1 is incompatible with prototype:\n\tprototype: string constant\n\t argument: string"},
		{"D_PRINTF_FMT_EMPTY", "printf", []Arg{str("")}, diag.D_PRINTF_FMT_EMPTY, 0,
			"printf( ) format string is empty"},
		{"D_PRINTF_FMT_EMPTY.nul", "system", []Arg{str("\x00ls")}, diag.D_PRINTF_FMT_EMPTY, 0,
			"system( ) format string is empty"},
		{"D_FREOPEN_INVALID", "freopen", []Arg{str(".")}, diag.D_FREOPEN_INVALID, 0,
			`freopen( ) argument #1 cannot be "."`},
		{"D_SYNTAX.badconv1", "printf", []Arg{str("%3$d"), val(types.IntType)}, diag.D_SYNTAX, 0,
			"format conversion #1 uses unsupported positional format (%n$)"},
		{"D_SYNTAX.badconv3", "printf", []Arg{str("%Z"), val(types.IntType)}, diag.D_SYNTAX, 0,
			"format conversion #1 is undefined: %Z"},
		{"D_PRINTF_AGG_CONV.aggfmt", "printf", []Arg{str("hello %@d"), val(types.IntType)}, diag.D_PRINTF_AGG_CONV, 0,
			"%@ conversion requires an aggregation and is not for use with printf( )"},
		{"D_PRINTF_ARG_EXTRA.toomany", "printf",
			[]Arg{str("x = %d y = %d\n"), val(types.IntType), val(types.IntType), val(types.IntType)},
			diag.D_PRINTF_ARG_EXTRA, 3,
			"printf( ) prototype mismatch: only 2 arguments required by this format string"},
		{"D_PRINTF_ARG_EXTRA.widths", "printf", []Arg{str("%?d\n"), val(types.IntType), val(types.IntType)},
			diag.D_PRINTF_ARG_EXTRA, 2,
			"printf( ) prototype mismatch: only 1 arguments required by this format string"},
		{"D_PRINTF_ARG_EXTRA.none", "printf", []Arg{str("%%\n"), val(types.IntType)},
			diag.D_PRINTF_ARG_EXTRA, 1,
			"printf( ) prototype mismatch: only 0 arguments required by this format string"},
		{"D_PRINTF_ARG_PROTO.novalue", "printf", []Arg{str("%s")}, diag.D_PRINTF_ARG_PROTO, 0,
			"printf( ) prototype mismatch: conversion #1 (%s) is missing a corresponding value argument"},
		{"D_PRINTF_ARG_PROTO.second", "printf", []Arg{str("%% %d %lld"), val(types.IntType)}, diag.D_PRINTF_ARG_PROTO, 0,
			"printf( ) prototype mismatch: conversion #3 (%lld) is missing a corresponding value argument"},
		{"D_PRINTF_ARG_TYPE.aggarg", "printf", []Arg{str("hello %d %d"), val(types.IntType), agg("a", "count")},
			diag.D_PRINTF_ARG_TYPE, 2,
			"printf( ) argument #3 is incompatible with conversion #2 prototype:\n\tconversion: %d\n\t prototype: char, short, int, long, or long long\n\t  argument: aggregation"},
		{"D_PRINTF_ARG_TYPE.string", "printf", []Arg{str("%d"), val(stringT)}, diag.D_PRINTF_ARG_TYPE, 1,
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %d\n\t prototype: char, short, int, long, or long long\n\t  argument: string"},
		{"D_PRINTF_ARG_TYPE.uaddr", "printf", []Arg{str("%A"), val(types.VoidPtr)}, diag.D_PRINTF_ARG_TYPE, 1,
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %A\n\t prototype: pointer or integer (with -p/-c) or _usymaddr (without -p/-c)\n\t  argument: void *"},
		{"D_PRINTF_ARG_TYPE.ld", "printf", []Arg{str("%ld"), val(types.LongLong)}, diag.D_PRINTF_ARG_TYPE, 1,
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %ld\n\t prototype: long\n\t  argument: long long"},
		{"D_PRINTF_ARG_TYPE.typename", "printf", []Arg{str("%s"), {Type: types.VoidPtr, TypeName: "userland void *"}},
			diag.D_PRINTF_ARG_TYPE, 1,
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %s\n\t prototype: char [] or string (or use stringof)\n\t  argument: userland void *"},
		{"D_PRINTF_DYN_PROTO.noprec", "printf", []Arg{str("%s %.*d\n"), val(stringT)}, diag.D_PRINTF_DYN_PROTO, 0,
			`printf( ) prototype mismatch: conversion #2 (%d) is missing a corresponding ".*" argument`},
		{"D_PRINTF_DYN_PROTO.nowidth", "printf", []Arg{str("%s %*d\n"), val(stringT)}, diag.D_PRINTF_DYN_PROTO, 0,
			`printf( ) prototype mismatch: conversion #2 (%d) is missing a corresponding "*" argument`},
		{"D_PRINTF_DYN_PROTO.both", "printf", []Arg{str("%*.*s\n"), val(types.IntType)}, diag.D_PRINTF_DYN_PROTO, 0,
			`printf( ) prototype mismatch: conversion #1 (%s) is missing a corresponding ".*" argument`},
		{"D_PRINTF_DYN_TYPE.badprec", "printf", []Arg{str("%.*d\n"), val(stringT), val(types.IntType)},
			diag.D_PRINTF_DYN_TYPE, 1,
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: % .* d\n\t prototype: int\n\t  argument: string"},
		{"D_PRINTF_DYN_TYPE.badwidth", "printf", []Arg{str("%*d\n"), val(stringT), val(types.IntType)},
			diag.D_PRINTF_DYN_TYPE, 1,
			"printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: % * d\n\t prototype: int\n\t  argument: string"},
		{"D_PRINTF_DYN_TYPE.prec", "printf", []Arg{str("%d %*.*s\n"), val(types.IntType), val(types.IntType), val(types.Double), val(stringT)},
			diag.D_PRINTF_DYN_TYPE, 3,
			"printf( ) argument #4 is incompatible with conversion #2 prototype:\n\tconversion: % .* s\n\t prototype: int\n\t  argument: double"},

		{"printa.basic", "printa", []Arg{str("%@u\n"), agg("a", "count")}, 0, 0, ""},
		{"printa.noformat", "printa", []Arg{agg("a", "count"), agg("b", "sum")}, 0, 0, ""},
		{"printa.tuple", "printa", []Arg{str("%@u: %d %d\n"), agg("a", "count", types.IntType, types.IntType, types.IntType)}, 0, 0, ""},
		{"printa.dynwidth", "printa", []Arg{str("-->%-*d<--\n"), agg("", "sum", types.IntType, types.IntType)}, 0, 0, ""},
		{"printa.stack", "printa", []Arg{str("%-20k\n"), agg("", "count", types.Stack)}, 0, 0, ""},
		{"printa.many", "printa", []Arg{str("%d %@d %@d\n"), agg("a", "count", types.IntType), agg("b", "sum", types.Long)}, 0, 0, ""},
		{"printa.strkeys", "printa", []Arg{agg("a", "count", stringT), agg("b", "sum", &types.Array{Elem: types.Char, Len: 16})}, 0, 0, ""},
		{"printa.ptrkeys", "printa", []Arg{agg("a", "count", &types.Pointer{Elem: types.IntType}), agg("b", "sum", types.VoidPtr)}, 0, 0, ""},

		{"D_PROTO_LEN.printa", "printa", nil, diag.D_PROTO_LEN, -1,
			"printa( ) prototype mismatch: 0 args passed, 1 expected"},
		{"D_PRINTA_PROTO.bad", "printa", []Arg{str("%d")}, diag.D_PRINTA_PROTO, -1,
			"printa( ) prototype mismatch: 1 args passed, 2 expected"},
		{"D_PRINTA_AGGARG.badagg", "printa", []Arg{str("%d"), val(types.IntType)}, diag.D_PRINTA_AGGARG, 1,
			"printa( ) argument #2 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int"},
		{"D_PRINTA_AGGARG.badfmt", "printa", []Arg{val(types.IntType)}, diag.D_PRINTA_AGGARG, 0,
			"printa( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int"},
		{"D_PRINTA_AGGARG.badval", "printa", []Arg{str("%@d\n"), val(types.IntType)}, diag.D_PRINTA_AGGARG, 1,
			"printa( ) argument #2 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int"},
		{"D_PRINTA_AGGARG.before_format", "printa", []Arg{str("%Z"), val(types.IntType)}, diag.D_PRINTA_AGGARG, 1,
			"printa( ) argument #2 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int"},
		{"D_PRINTA_AGGARG.second", "printa", []Arg{str("%@d\n"), agg("a", "sum"), val(stringT)}, diag.D_PRINTA_AGGARG, 2,
			"printa( ) argument #3 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: string"},
		{"D_PRINTA_AGGBAD", "printa", []Arg{str("%@d\n"), undefined}, diag.D_PRINTA_AGGBAD, 1,
			"undefined aggregation: @u"},
		{"D_PRINTA_AGGKEY", "printa", []Arg{agg("a", "count", types.IntType), agg("b", "count", types.IntType, stringT)},
			diag.D_PRINTA_AGGKEY, 1,
			"printa( ): @a and @b do not have matching key signatures: @a has 1 key, @b has 2 keys"},
		{"D_PRINTA_AGGPROTO", "printa", []Arg{str("%d %@d %@d\n"), agg("a", "count", types.IntType), agg("bb", "sum", stringT)},
			diag.D_PRINTA_AGGPROTO, 2,
			"printa( ): @bb[ ] key #1 is incompatible with @a:\n        a key #1: int\n       bb key #1: string"},
		{"D_PRINTA_AGGPROTO.ptr", "printa", []Arg{agg("a", "count", &types.Pointer{Elem: types.IntType}), agg("b", "count", &types.Pointer{Elem: types.Long})},
			diag.D_PRINTA_AGGPROTO, 1,
			"printa( ): @b[ ] key #1 is incompatible with @a:\n        a key #1: int *\n        b key #1: long *"},
		{"D_PRINTA_AGGPROTO.stack", "printa", []Arg{agg("a", "count", types.Stack), agg("b", "count", types.SymAddr)},
			diag.D_PRINTA_AGGPROTO, 1,
			"printa( ): @b[ ] key #1 is incompatible with @a:\n        a key #1: stack\n        b key #1: _symaddr"},
		{"D_PRINTF_ARG_TYPE.stack", "printa", []Arg{str("%p\n"), agg("_", "count", types.Stack)}, diag.D_PRINTF_ARG_TYPE, 1,
			"printa( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %p\n\t prototype: pointer or integer\n\t  argument: stack"},
		{"D_PRINTF_ARG_TYPE.aggvalue", "printa", []Arg{str("%@s\n"), agg("a", "sum")}, diag.D_PRINTF_ARG_TYPE, 1,
			"printa( ) aggregating action is incompatible with conversion #1 prototype:\n\tconversion: %s\n\t prototype: char [] or string (or use stringof)\n\t  argument: int64_t"},
		{"D_PRINTF_ARG_TYPE.countvalue", "printa", []Arg{str("%@k\n"), agg("a", "count")}, diag.D_PRINTF_ARG_TYPE, 1,
			"printa( ) aggregating action is incompatible with conversion #1 prototype:\n\tconversion: %k\n\t prototype: stack\n\t  argument: uint64_t"},
		{"D_PRINTF_ARG_PROTO.printa", "printa", []Arg{str("%d %d %@d\n"), agg("a", "count", types.IntType)}, diag.D_PRINTF_ARG_PROTO, 0,
			"printa( ) prototype mismatch: conversion #2 (%d) is missing a corresponding value argument"},
		{"D_PRINTF_DYN_TYPE.printa", "printa", []Arg{str("%*d %@d\n"), agg("a", "count", stringT, types.IntType)}, diag.D_PRINTF_DYN_TYPE, 1,
			"printa( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: % * d\n\t prototype: int\n\t  argument: string"},
		{"D_PRINTF_FMT_EMPTY.printa", "printa", []Arg{str(""), agg("a", "count")}, diag.D_PRINTF_FMT_EMPTY, 0,
			"printa( ) format string is empty"},
		{"D_SYNTAX.printa", "printa", []Arg{str("%@Q"), agg("a", "count")}, diag.D_SYNTAX, 0,
			"format conversion #1 is undefined: %Q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := CheckCall(Action{Name: tt.action}, tt.args)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("CheckCall: %v", err)
				}
				hasFormat := len(tt.args) > 0 && tt.args[0].Const
				if (f != nil) != hasFormat {
					t.Fatalf("CheckCall returned format %v for a call with format %v", f, hasFormat)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("CheckCall = %v, %v; want error %q", f, err, tt.msg)
			}
			if want := (Error{Tag: tt.tag, Msg: tt.msg, Arg: tt.arg}); *e != want {
				t.Errorf("error\n got %+v\nwant %+v", *e, want)
			}
		})
	}
}

// TestFreopenRestore checks that freopen("") records dtrace's sentinel.
func TestFreopenRestore(t *testing.T) {
	f, err := CheckCall(Action{Name: "freopen"}, []Arg{str("")})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.String(); got != "." {
		t.Errorf("freopen(\"\") format = %q, want %q", got, ".")
	}
}

// TestIntName checks the spellings of C integer types that compare
// equal.
func TestIntName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"int", "int"},
		{"signed", "int"},
		{"unsigned", "unsigned int"},
		{"long int", "long"},
		{"long unsigned int", "unsigned long"},
		{"unsigned long long int", "unsigned long long"},
		{"long long unsigned int", "unsigned long long"},
		{"short int", "short"},
		{"signed short", "short"},
		{"short unsigned int", "unsigned short"},
		{"char", "char"},
		{"signed char", "signed char"},
		{"char signed", "signed char"},
		{"unsigned char", "unsigned char"},
		{"long double", "long double"},
		{"_Bool", "_Bool"},
		{"", ""},
		{"long long long", "long long long"},
		{"short long", "short long"},
		{"signed unsigned", "signed unsigned"},
		{"char int", "char int"},
	}
	for _, tt := range tests {
		if got := intName(tt.in); got != tt.want {
			t.Errorf("intName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
