package consumer

import (
	"fmt"
	"strings"
)

// A Format is how the consumer writes what it decodes: Config.Format.
type Format int

// The output formats.
const (
	Text Format = iota // dtrace's text, byte for byte
	JSON               // JSON Lines, as kdtrace(1)'s JSON OUTPUT section describes them
)

// formats are the output formats: each one's name (the oformat
// option's value) and the formatter that writes it. A new format is a
// row here and a formatter.
var formats = [...]struct {
	name string
	new  func(*Consumer) formatter
}{
	Text: {"text", newTextFormatter},
	JSON: {"json", newJSONFormatter},
}

func (f Format) String() string {
	if f >= 0 && int(f) < len(formats) {
		return formats[f].name
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat returns the format of the given name ("text", "json").
func ParseFormat(name string) (Format, error) {
	var names []string
	for f, row := range formats {
		if row.name == name {
			return Format(f), nil
		}
		names = append(names, row.name)
	}
	return 0, fmt.Errorf("unknown output format %q (one of %s)", name, strings.Join(names, ", "))
}

// A formatter renders what the consumer decodes, in the order the
// consumer walks it; the consumer carries out what actions do
// (exit(), the library actions, system(), freopen()) before it hands
// their records over, once for every format.
type formatter interface {
	// begin starts a firing's output; end ends it. An error of end's
	// is the firing's. The head is passed by value: a pointer handed
	// to an interface would be allocated for every firing.
	begin(h firingHead)
	end() error
	// datum renders one record of the firing.
	datum(d *datum) error
	// printa renders printa() of the aggregation variables varids
	// with format (0 for none), the entries as they are now.
	printa(varids []uint32, format uint16) error
	// fault renders a firing of the ERROR clause, and drop a drop,
	// msg being dtrace's words for it, which the consumer has
	// reported on Config.Err.
	fault(r *faultReport)
	drop(d Drop, msg string) error
	// finish renders what dtrace prints when tracing stops: with
	// aggs, the aggregations printa() has not printed.
	finish(aggs bool) error
}
