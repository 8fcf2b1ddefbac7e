package printf

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kdtrace/kdtrace/dlang/diag"
)

// TestParseConversions parses every conversion of dtrace's table.
func TestParseConversions(t *testing.T) {
	tests := []struct {
		conv   string
		length string
		kind   kind
		out    string // Out before checking
	}{
		{"a", "", Addr, "s"},
		{"A", "", UAddr, "s"},
		{"c", "", Signed, "c"},
		{"C", "", EscChar, "s"},
		{"d", "", Decimal, "d"},
		{"e", "", Float, "e"},
		{"E", "", Float, "E"},
		{"f", "", Float, "f"},
		{"g", "", Float, "g"},
		{"G", "", Float, "G"},
		{"hd", "h", Signed, "hd"},
		{"hi", "h", Signed, "hi"},
		{"ho", "h", Unsigned, "ho"},
		{"hu", "h", Unsigned, "hu"},
		{"hx", "h", Unsigned, "hx"},
		{"hX", "h", Unsigned, "hX"},
		{"i", "", Signed, "i"},
		{"I", "", InetAddr, "s"},
		{"k", "", Stack, "s"},
		{"lc", "l", Signed, "lc"},
		{"ld", "l", Signed, "ld"},
		{"li", "l", Signed, "li"},
		{"lo", "l", Unsigned, "lo"},
		{"lu", "l", Unsigned, "lu"},
		{"ls", "l", WideString, "ls"},
		{"lx", "l", Unsigned, "lx"},
		{"lX", "l", Unsigned, "lX"},
		{"lld", "ll", Signed, "lld"},
		{"lli", "ll", Signed, "lli"},
		{"llo", "ll", Unsigned, "llo"},
		{"llu", "ll", Unsigned, "llu"},
		{"llx", "ll", Unsigned, "llx"},
		{"llX", "ll", Unsigned, "llX"},
		{"Le", "L", Float, "Le"},
		{"LE", "L", Float, "LE"},
		{"Lf", "L", Float, "Lf"},
		{"Lg", "L", Float, "Lg"},
		{"LG", "L", Float, "LG"},
		{"o", "", Unsigned, "o"},
		{"p", "", Unsigned, "p"},
		{"P", "", Port, "s"},
		{"s", "", String, "s"},
		{"S", "", EscString, "s"},
		{"T", "", RFC822Time, "s"},
		{"u", "", Unsigned, "u"},
		{"wc", "w", Signed, "wc"},
		{"ws", "w", WideString, "ws"},
		{"x", "", Unsigned, "x"},
		{"X", "", Unsigned, "X"},
		{"Y", "", Time, "s"},
		{"%", "", Percent, "%"},
	}
	if len(tests) != len(specs) {
		t.Errorf("%d conversions tested, the table has %d", len(tests), len(specs))
	}
	for _, tt := range tests {
		f, err := Parse("%" + tt.conv)
		if err != nil {
			t.Errorf("Parse(%%%s): %v", tt.conv, err)
			continue
		}
		c := f.Convs[0]
		verb := tt.conv[len(tt.conv)-1]
		if len(f.Convs) != 1 || f.Tail != "" || c.Text != "%"+tt.conv || c.Length != tt.length ||
			c.Verb != verb || c.Kind != tt.kind || c.Out != tt.out || c.Flags != 0 {
			t.Errorf("Parse(%%%s) = %+v, tail %q; want length %q verb %c kind %d out %q",
				tt.conv, c, f.Tail, tt.length, verb, tt.kind, tt.out)
		}
	}
}

// TestParseFlags checks flags, widths and precisions, including the
// orders and repetitions dtrace accepts.
func TestParseFlags(t *testing.T) {
	tests := []struct {
		format      string
		flags       flags
		width, prec int
		length      string
		verb        byte
	}{
		{"%#x", Alt, 0, 0, "", 'x'},
		{"%0x", ZeroPad, 0, 0, "", 'x'},
		{"%-x", Left, 0, 0, "", 'x'},
		{"%+d", Plus, 0, 0, "", 'd'},
		{"% d", Space, 0, 0, "", 'd'},
		{"%'d", group, 0, 0, "", 'd'},
		{"%@d", AggValue, 0, 0, "", 'd'},
		{"%*d", DynWidth, 0, 0, "", 'd'},
		{"%.*s", DynPrec, 0, 0, "", 's'},
		{"%*.*s", DynWidth | DynPrec, 0, 0, "", 's'},
		{"%-*d", Left | DynWidth, 0, 0, "", 'd'},
		{"%08x", ZeroPad, 8, 0, "", 'x'},
		{"%-0d", ZeroPad, 0, 0, "", 'd'}, // the later of - and 0 wins
		{"%0-d", Left, 0, 0, "", 'd'},
		{"%-05d", ZeroPad, 5, 0, "", 'd'},
		{"%10.3f", 0, 10, 3, "", 'f'},
		{"%.3s", 0, 0, 3, "", 's'},
		{"%.0s", 0, 0, 0, "", 's'}, // no precision, as dtrace has it
		{"%.s", 0, 0, 0, "", 's'},
		{"%.05s", 0, 0, 5, "", 's'}, // a 0 after the '.' is a digit
		{"%0.0s", ZeroPad, 0, 0, "", 's'},
		{"%?p", 0, 16, 0, "", 'p'},
		{"%?8p", 0, 8, 0, "", 'p'},
		{"%8?p", 0, 16, 0, "", 'p'},
		{"%5 3d", Space, 3, 0, "", 'd'}, // a later width replaces an earlier one
		{"%8@d", AggValue, 8, 0, "", 'd'},
		{"%@10d", AggValue, 10, 0, "", 'd'},
		{"%l-5d", Left, 5, 0, "l", 'd'}, // length letters may come anywhere
		{"%l5ld", 0, 5, 0, "ll", 'd'},
		{"%#-+ '@08.3lld", Alt | ZeroPad | Plus | Space | group | AggValue, 8, 3, "ll", 'd'},
		{"%2147483648d", 0, -2147483648, 0, "", 'd'}, // C's int wraps
	}
	for _, tt := range tests {
		f, err := Parse(tt.format)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.format, err)
			continue
		}
		c := f.Convs[0]
		if c.Flags != tt.flags || c.Width != tt.width || c.Prec != tt.prec || c.Length != tt.length ||
			c.Verb != tt.verb || c.Text != tt.format {
			t.Errorf("Parse(%q) = flags %#x width %d prec %d length %q verb %c text %q; want %#x %d %d %q %c",
				tt.format, c.Flags, c.Width, c.Prec, c.Length, c.Verb, c.Text,
				tt.flags, tt.width, tt.prec, tt.length, tt.verb)
		}
	}
}

// TestParseText checks how literal text and conversions alternate.
func TestParseText(t *testing.T) {
	type conv struct{ Prefix, Text string }
	tests := []struct {
		format string
		convs  []conv
		tail   string
	}{
		{"", nil, ""},
		{"hello world\n", nil, "hello world\n"},
		{"%d", []conv{{"", "%d"}}, ""},
		{"x = %d, y = %-8s\n", []conv{{"x = ", "%d"}, {", y = ", "%-8s"}}, "\n"},
		{"%d%s", []conv{{"", "%d"}, {"", "%s"}}, ""},
		{"100%% sure", []conv{{"100", "%%"}}, " sure"},
		{"%%%d%%", []conv{{"", "%%"}, {"", "%d"}, {"", "%%"}}, ""},
		{"%@u: %d\n", []conv{{"", "%@u"}, {": ", "%d"}}, "\n"},
		{"a%d\x00%Z", []conv{{"a", "%d"}}, ""}, // a C string ends at its NUL
	}
	for _, tt := range tests {
		f, err := Parse(tt.format)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.format, err)
			continue
		}
		var got []conv
		for _, c := range f.Convs {
			got = append(got, conv{c.Prefix, c.Text})
		}
		if diff := cmp.Diff(tt.convs, got); diff != "" || f.Tail != tt.tail {
			t.Errorf("Parse(%q): conversions (-want +got):\n%s tail %q, want %q", tt.format, diff, f.Tail, tt.tail)
		}
	}
}

// TestParseErrors checks dtrace's messages for malformed formats.
func TestParseErrors(t *testing.T) {
	tests := []struct {
		format, msg string
	}{
		{"%3$d", "format conversion #1 uses unsupported positional format (%n$)"},
		{"%3", "format conversion #1 name expected before end of format string"},
		{"%Z", "format conversion #1 is undefined: %Z"},
		{"%", "format conversion #1 name expected before end of format string"},
		{"abc %d %", "format conversion #2 name expected before end of format string"},
		{"%%%", "format conversion #2 name expected before end of format string"},
		{"%-", "format conversion #1 name expected before end of format string"},
		{"%\x00d", "format conversion #1 name expected before end of format string"},
		{"%d %**d", "format conversion #2 has more than one '*' specified for the output precision"},
		{"%.**d", "format conversion #1 has more than one '*' specified for the output precision"},
		{"%*.**d", "format conversion #1 has more than one '*' specified for the output precision"},
		{"%1.2.3d", "format conversion #1 has more than one '.' specified"},
		{"%.*.*d", "format conversion #1 has more than one '.' specified"},
		{"%5%", "format conversion #1 cannot be combined with other format flags: %%"},
		{"%-%", "format conversion #1 cannot be combined with other format flags: %%"},
		{"%h%", "format conversion #1 cannot be combined with other format flags: %%"},
		{"%hhd", "format conversion #1 is undefined: %hhd"},
		{"%hhhhhhhhd", "format conversion #1 is undefined: %hhhhhhd"},
		{"%lllld", "format conversion #1 is undefined: %lllld"},
		{"%Ld", "format conversion #1 is undefined: %Ld"},
		{"%hs", "format conversion #1 is undefined: %hs"},
		{"%wd", "format conversion #1 is undefined: %wd"},
		{"%lf", "format conversion #1 is undefined: %lf"},
		{"%zd", "format conversion #1 is undefined: %z"},
		{"%jd", "format conversion #1 is undefined: %j"},
		{"%n", "format conversion #1 is undefined: %n"},
		{"%B", "format conversion #1 is undefined: %B"},
		{"%@", "format conversion #1 name expected before end of format string"},
		{"%d %s %q", "format conversion #3 is undefined: %q"},
		{"%\n", "format conversion #1 is undefined: %\n"},
	}
	for _, tt := range tests {
		f, err := Parse(tt.format)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Parse(%q) = %v, %v; want error %q", tt.format, f, err, tt.msg)
			continue
		}
		if want := (&Error{Tag: diag.D_SYNTAX, Msg: tt.msg, Arg: 0}); *e != *want {
			t.Errorf("Parse(%q) error = %+v\nwant %+v", tt.format, *e, *want)
		}
	}
}

// TestString checks the format as dtrace writes it back, before any
// checking.
func TestString(t *testing.T) {
	tests := []struct{ in, out string }{
		{"", ""},
		{"plain text\n", "plain text\n"},
		{"%d %s\n", "%d %s\n"},
		{"%-8.3s|%08x|%'5d", "%-8.3s|%08x|%'5d"},
		{"% +d", "%+ d"},
		{"%.0f %.f", "%f %f"},
		{"%?p", "%16p"},
		{"%0-5d", "%-5d"},
		{"%*.*-d", "%-*.*d"},
		{"%10@d %@u", "%@10d %@u"},
		{"%%", "%%"},
		{"%ld %wc %ws %Le", "%ld %wc %ws %Le"},
		{"%a %A %k %Y %T %P %I %S %C", "%a %A %k %Y %T %P %I %S %C"},
		{"%l-5d", "%-5ld"},
	}
	for _, tt := range tests {
		f, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := f.String(); got != tt.out {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.in, got, tt.out)
		}
	}
}

// TestParseWhole compares a whole parsed format.
func TestParseWhole(t *testing.T) {
	f, err := Parse("at %Y: %-*s %5.2f%%\n")
	if err != nil {
		t.Fatal(err)
	}
	want := &Format{
		Convs: []Conv{
			{Prefix: "at ", Text: "%Y", Verb: 'Y', Kind: Time, Out: "s"},
			{Prefix: ": ", Text: "%-*s", Flags: Left | DynWidth, Verb: 's', Kind: String, Out: "s"},
			{Prefix: " ", Text: "%5.2f", Width: 5, Prec: 2, Verb: 'f', Kind: Float, Out: "f"},
			{Text: "%%", Verb: '%', Kind: Percent, Out: "%"},
		},
		Tail: "\n",
	}
	if diff := cmp.Diff(want, f, cmpopts.IgnoreUnexported(Conv{})); diff != "" {
		t.Errorf("Parse mismatch (-want +got):\n%s", diff)
	}
}

func BenchmarkParse(b *testing.B) {
	const format = "%Y %-16s pid %6d: %s(0x%p, %lld) = %d [%5.2f%%]\n"
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(format); err != nil {
			b.Fatal(err)
		}
	}
}
