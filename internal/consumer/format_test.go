package consumer_test

import (
	"bytes"
	"testing"

	"github.com/kdtrace/kdtrace/internal/consumer"
)

// TestParseFormat checks the formats' names, as the oformat option
// gives them, both ways, and that each names a formatter of its own:
// the same drop is written differently by each, or not at all.
func TestParseFormat(t *testing.T) {
	tests := []struct {
		name   string
		format consumer.Format
		out    string // what a drop of 2 on CPU 0 writes on the output
	}{
		{"text", consumer.Text, ""},
		{"json", consumer.JSON, `{"version":1,"type":"drop","kind":"principal","cpu":0,"count":2,"message":"dtrace: 2 drops on CPU 0"}` + "\n"},
	}
	for _, tt := range tests {
		f, err := consumer.ParseFormat(tt.name)
		if err != nil || f != tt.format {
			t.Errorf("ParseFormat(%q) = %v, %v; want %v", tt.name, f, err, tt.format)
		}
		if got := tt.format.String(); got != tt.name {
			t.Errorf("%d.String() = %q, want %q", int(tt.format), got, tt.name)
		}
		var out, errs bytes.Buffer
		c := consumer.New(nil, consumer.Config{Out: &out, Err: &errs, Format: f})
		if err := c.ReportDrop(consumer.Drop{Kind: consumer.DropPrincipal, CPU: 0, Count: 2}); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != tt.out {
			t.Errorf("%s: a drop writes %q, want %q", tt.name, got, tt.out)
		}
		if got, want := errs.String(), "dtrace: 2 drops on CPU 0\n"; got != want {
			t.Errorf("%s: a drop reports %q, want %q", tt.name, got, want)
		}
	}
	for _, bad := range []string{"", "xml", "JSON"} {
		if f, err := consumer.ParseFormat(bad); err == nil {
			t.Errorf("ParseFormat(%q) = %v, want an error", bad, f)
		}
	}
}
