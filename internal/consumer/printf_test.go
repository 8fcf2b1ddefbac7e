package consumer_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// arg is one record of a printf() and the value it holds.
type arg struct {
	t dif.Type
	v record.Value
}

var (
	i1  = dif.IntType(1)
	i2  = dif.IntType(2)
	i4  = dif.IntType(4)
	i8  = dif.IntType(8)
	f4  = dif.Type{Kind: dif.TypeCTF, CtfKind: dif.CTFFloat, Size: 4}
	f8  = dif.Type{Kind: dif.TypeCTF, CtfKind: dif.CTFFloat, Size: 8}
	str = dif.StringType(16)
	ws  = dif.Type{Kind: dif.TypeCTF, CtfKind: dif.CTFArray, Flags: dif.TFByRef, Size: 16}
)

func n(t dif.Type, v int64) arg { return arg{t, record.Value{Int: uint64(v)}} }
func s(v string) arg            { return arg{str, record.Value{Ref: []byte(v)}} }
func f64(v float64) arg         { return arg{f8, record.Value{Int: math.Float64bits(v)}} }
func f32(v float32) arg         { return arg{f4, record.Value{Int: uint64(math.Float32bits(v))}} }
func wide(r ...rune) arg        { return arg{ws, record.Value{Ref: wchars(r)}} }
func wchars(r []rune) []byte {
	b := make([]byte, 16)
	for i, c := range r {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(c))
	}
	return b
}

// fakeSymbols knows one kernel symbol, malloc at 0x1000, 0x100 long,
// in a module that also holds 0x2000 without a symbol; and one user
// symbol of pid 7, main at 0x400000 in a.out.
type fakeSymbols struct{}

func (fakeSymbols) Kernel(addr uint64) (consumer.Symbol, bool) {
	switch {
	case addr >= 0x1000 && addr < 0x1100:
		return consumer.Symbol{Object: "kernel", Name: "malloc", Value: 0x1000}, true
	case addr == 0x2000:
		return consumer.Symbol{Object: "kernel"}, true
	}
	return consumer.Symbol{}, false
}

func (fakeSymbols) User(pid, addr uint64) (consumer.Symbol, bool) {
	if pid == 7 && addr >= 0x400000 && addr < 0x400100 {
		return consumer.Symbol{Object: "a.out", Name: "main", Value: 0x400000}, true
	}
	return consumer.Symbol{}, false
}

// printfOut prints one firing of printf(format, args...) with quiet set.
func printfOut(t *testing.T, format string, args []arg) (string, error) {
	t.Helper()
	var acts []enabling.Action
	var vals []record.Value
	if len(args) == 0 {
		args = []arg{n(i4, 0)} // printf's DIFO when it has no argument
	}
	for _, a := range args {
		acts = append(acts, enabling.Action{Kind: dof.ActPrintf, Format: format, DIFO: &dif.Object{Ret: a.t}})
		vals = append(vals, a.v)
	}
	l := record.NewLayout(record.DefaultOptions)
	eps, err := l.Add(&enabling.ECB{Actions: acts}, []record.Probe{{ID: 1, Provider: "dtrace", Name: "BEGIN"}})
	if err != nil {
		t.Fatal(err)
	}
	b := record.NewBuffer(1024)
	if _, err := b.Write(eps[0], 0, vals); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := consumer.New(l, consumer.Config{Out: &out, Quiet: true, Symbols: fakeSymbols{}, Target: 7})
	err = c.Consume(0, b.Bytes(), 0)
	return out.String(), err
}

// TestPrintf checks each conversion against what FreeBSD's dtrace
// prints: printf(3)'s rules in the C locale, dtrace's own conversions,
// and the value read at the size of its record.
func TestPrintf(t *testing.T) {
	defer func(l *time.Location) { time.Local = l }(time.Local)
	time.Local = time.UTC
	tests := []struct {
		format string
		args   []arg
		want   string
	}{
		{"hello", nil, "hello"},
		{"100%%", nil, "100%"},
		{"%d %d", []arg{n(i4, -1), n(i1, -1)}, "-1 255"}, // %d as it is reads a small value as unsigned
		{"%i %i %i %i", []arg{n(i1, -1), n(i2, -2), n(i4, -3), n(i8, -4)}, "-1 -2 -3 -4"},
		{"%u %u %u %u", []arg{n(i1, -1), n(i2, -1), n(i4, -1), n(i8, -1)}, "255 65535 4294967295 18446744073709551615"},
		{"%lli", []arg{n(i8, math.MinInt64)}, "-9223372036854775808"},
		{"%x %X %o", []arg{n(i2, 0xbeef), n(i2, 0xbeef), n(i4, 8)}, "beef BEEF 10"},
		{"%#x %#x %#o %#o", []arg{n(i4, 255), n(i4, 0), n(i4, 8), n(i4, 0)}, "0xff 0 010 0"},
		{"%8.3i|%-5i|%+i|% i|%05i|%.0i|", []arg{n(i4, 5), n(i4, 42), n(i4, 5), n(i4, 5), n(i4, -42), n(i4, 0)}, "     005|42   |+5| 5|-0042|0|"}, // dtrace drops a precision of 0
		{"%08.3i|%#010x", []arg{n(i4, 7), n(i4, 255)}, "     007|0x000000ff"},
		{"%p %p", []arg{n(i8, 0x1234), n(i8, 0)}, "0x1234 0x0"},
		{"%#.5o|%#X|%-#8x|%+.3d|%08.3X|%#08o|%-+6d|", []arg{n(i4, 8), n(i4, 255), n(i4, 255), n(i4, 5), n(i4, 255), n(i4, 8), n(i4, 7)}, "00010|0XFF|0xff    |+005|     0FF|00000010|+7    |"},
		{"%c|%3c|%-3c|", []arg{n(i4, 'A'), n(i1, 'b'), n(i2, 'c')}, "A|  b|c  |"},
		{"%lc %wc", []arg{n(i4, 'a'), n(i4, 'b')}, "a b"},
		{"%s|%.2s|%-7s|%7s|%07s", []arg{s("hello"), s("hello"), s("hello"), s("hello"), s("hi")}, "hello|he|hello  |  hello|00000hi"},
		{"%S", []arg{s("a\tb\"\\\x01 ")}, `a\tb\"\\\001 \0`},
		{"%C%C", []arg{n(i1, '\n'), n(i4, 'x')}, `\nx`},
		{"%ls|%5ls", []arg{wide('h', 'i'), wide('o', 'k')}, "hi|   ok"},
		{"%e %E", []arg{f64(1234.5), f64(-0.00012)}, "1.234500e+03 -1.200000E-04"},
		{"%f %.2f %10.3f %-8.1f| %+f %f", []arg{f64(3.14159), f64(3.14159), f64(2.5), f64(2.25), f64(1), f32(1.5)}, "3.141590 3.14      2.500 2.2     | +1.000000 1.500000"},
		{"%g %g %g %g %G %#g %g %.3g", []arg{f64(0.0001), f64(1234567), f64(100000), f64(0), f64(1e-5), f64(1), f64(1e100), f64(2.5)}, "0.0001 1.23457e+06 100000 0 1E-05 1.00000 1e+100 2.5"},
		{"%f %e %G", []arg{f64(math.Inf(1)), f64(math.Inf(-1)), f64(math.NaN())}, "inf -inf NAN"},
		{"%*d|%*d|%.*s|%*.*s|", []arg{n(i4, 5), n(i4, 42), n(i4, -5), n(i4, 42), n(i4, 3), s("hello"), n(i8, 4), n(i4, 2), s("hello")}, "   42|42   |hel|  he|"},
		{"%a %a %a %a", []arg{n(i8, 0x1000), n(i8, 0x1010), n(i8, 0x2000), n(i8, 0x3000)}, "kernel`malloc kernel`malloc+0x10 kernel`0x2000 0x3000"},
		{"%-20a|", []arg{n(i8, 0x1000)}, "kernel`malloc       |"},
		{"%A %A", []arg{n(i8, 0x400004), n(i8, 0x500000)}, "a.out`main+0x4 0x500000"},
		{"%Y", []arg{n(i8, 86400*1e9+3723e9)}, "1970 Jan  2 01:02:03"},
		// %T's year is strftime's %G, the ISO week's: 2019 for 2018's last day.
		{"%T|%T", []arg{n(i8, 1062609821e9), n(i8, 1546214400e9)}, "Wed, 03 Sep 2003 17:23:41 UTC|Mon, 31 Dec 2019 00:00:00 UTC"},
		{"%P %I", []arg{n(i2, 22), s("127.0.0.1")}, "22 127.0.0.1"},
	}
	for _, tt := range tests {
		got, err := printfOut(t, tt.format, tt.args)
		if err != nil {
			t.Errorf("printf(%q): %v", tt.format, err)
			continue
		}
		if got != tt.want {
			t.Errorf("printf(%q) = %q, want %q", tt.format, got, tt.want)
		}
	}
}

func TestPrintfErrors(t *testing.T) {
	for _, tt := range []struct {
		format string
		args   []arg
	}{
		{"%d %d", []arg{n(i4, 1)}},          // a conversion without a record
		{"%s", []arg{n(i4, 1)}},             // well, a string conversion of an int: printed
		{"%lc", []arg{n(i4, 0x263a)}},       // not a character of the C locale
		{"%f", []arg{n(i2, 1)}},             // a float of 2 bytes
		{"%*d", []arg{s("wide"), n(i4, 1)}}, // a width that is not an integer
	} {
		got, err := printfOut(t, tt.format, tt.args)
		if tt.format == "%s" {
			// dtrace prints a record's bytes as a string whatever they
			// are: the int 1 is "\x01".
			if err != nil || got != "\x01" {
				t.Errorf("printf(%q) = %q, %v", tt.format, got, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("printf(%q) = %q, want an error", tt.format, got)
		}
	}
}
