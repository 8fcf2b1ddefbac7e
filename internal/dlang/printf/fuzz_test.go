package printf

import (
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// FuzzParse checks that Parse never panics, that a parsed format is its
// input cut into pieces, that what String writes back parses to the same
// format, and that checking it against any values never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"", "hello\n", "%d", "%%", "x = %d, y = %-8s\n", "%*.*s", "%@10d %@u: %d\n",
		"%#-+ '08.3lld", "%?p", "%l-5d", "%3$d", "%3", "%Z", "%hhd", "%.**d", "%5%",
		"%-20k\n", "%Y %T %a %A %P %I %S %C %ls %ws %wc %lc", "%Le %LG %hx %llX",
		"%2147483648d", "%.0s", "a\x00%d",
	} {
		f.Add(s)
	}
	values := []Arg{
		{Type: types.IntType}, {Type: &types.String{Bytes: 256}}, {Type: types.Long},
		{Type: types.Stack}, {Type: types.VoidPtr}, {Type: types.Double}, {}, {Type: types.Dyn},
	}
	f.Fuzz(func(t *testing.T, s string) {
		fm, err := Parse(s)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q) error %T is not *Error", s, err)
			}
			return
		}
		var b strings.Builder
		roundTrips := true
		for _, c := range fm.Convs {
			if !strings.HasPrefix(c.Text, "%") || c.Out == "" || c.spec == nil {
				t.Fatalf("Parse(%q): bad conversion %+v", s, c)
			}
			b.WriteString(c.Prefix)
			b.WriteString(c.Text)
			// dtrace cannot write these back so that they parse again:
			// a wrapped negative width, or a width or precision beside
			// ".*", which is written before them.
			if c.Width < 0 || c.Prec < 0 || c.Flags&DynPrec != 0 && (c.Width != 0 || c.Prec != 0) {
				roundTrips = false
			}
		}
		b.WriteString(fm.Tail)
		if got := b.String(); got != cString(s) {
			t.Fatalf("Parse(%q) pieces make %q", s, got)
		}
		if roundTrips {
			out := fm.String()
			again, err := Parse(out)
			if err != nil {
				t.Fatalf("Parse(%q).String() = %q, which does not parse: %v", s, out, err)
			}
			if out2 := again.String(); out2 != out {
				t.Fatalf("Parse(%q).String() = %q, then %q", s, out, out2)
			}
		}
		for n := range values {
			fm.Check(Action{Name: "printf", Target: n%2 == 0}, values[:n])
		}
		agg := &Aggregation{Name: "a", Func: "count", Keys: values}
		fm.check(Action{Name: "printa"}, agg.Keys, agg)
	})
}
