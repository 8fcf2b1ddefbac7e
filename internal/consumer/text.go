package consumer

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dof"
)

// textFormatter writes dtrace's text, byte for byte: the heading, each
// firing's probe columns (CPU, ID, FUNCTION:NAME, or flowindent's
// indented function), each record as chewrec prints it, aggregations
// as dt_print_aggs and dtrace_fprinta print them (aggprint.go).
type textFormatter struct{ c *Consumer }

func newTextFormatter(c *Consumer) formatter { return textFormatter{c} }

// begin prints the heading the first time, then the firing's columns
// (chew), on dtrace(1)'s own output.
func (t textFormatter) begin(h firingHead) {
	c := t.c
	own := c.own()
	if !c.heading {
		switch {
		case c.cfg.Flowindent:
			// Even with quiet, as dtrace(1) prints it.
			fmt.Fprintf(own, "%3s %s\n", "CPU", padRight("FUNCTION", 41))
		case !c.cfg.Quiet:
			fmt.Fprintf(own, "%3s %6s %32s\n", "CPU", "ID", "FUNCTION:NAME")
		}
		c.heading = true
	}
	switch {
	case c.cfg.Flowindent:
		name := strings.Repeat(" ", h.indent) + h.prefix + h.p.Function
		if h.flow == flowNone {
			name += ":" + h.p.Name
		}
		fmt.Fprintf(own, "%3d %s ", h.cpu, padRight(name, 41))
	case !c.cfg.Quiet:
		// "%3d %6d %32s ", without fmt: it starts every firing's line.
		var num [20]byte
		cpu := strconv.AppendInt(num[:0], int64(h.cpu), 10)
		b := appendRepeat(c.line[:0], ' ', 3-len(cpu))
		b = append(b, cpu...)
		b = appendInt(b, 6, int64(h.p.ID))
		b = append(b, ' ')
		b = appendRepeat(b, ' ', 32-len(h.p.Function)-1-len(h.p.Name))
		b = append(b, h.p.Function...)
		b = append(b, ':')
		b = append(b, h.p.Name...)
		c.line = append(b, ' ')
		own.Write(c.line)
	}
}

// end prints chewrec's newline, unless quiet.
func (t textFormatter) end() error {
	if !t.c.cfg.Quiet {
		t.c.own().WriteString("\n")
	}
	return nil
}

// datum prints a record as chewrec and dt_consume_cpu do: exit()'s
// prints nothing, system()'s and freopen()'s neither (they act),
// printf()'s its text, print()'s its value as its type, the others by
// their kind.
func (t textFormatter) datum(d *datum) error {
	c := t.c
	switch d.kind {
	case datumExit:
		return nil
	case datumPrintf:
		if d.rec.Action == dof.ActPrintf {
			c.w.Write(d.text)
		}
		return nil
	case datumMem:
		width := -33
		if d.rec.Action == dof.ActPrintm {
			width = 50
		}
		c.bytes(d.b, width, true)
		return nil
	}
	if d.print {
		if ok, err := c.print(d.rec, d.b); err != nil || ok {
			return err
		}
	}
	if d.kind != datumInt {
		t.write(c.w, d, -33, c.cfg.Quiet)
		return nil
	}
	// " %3d", " %5d", " %8d", " %16lld" by size, or "%d" with quiet.
	if c.cfg.Quiet {
		c.line = strconv.AppendInt(c.line[:0], d.i, 10)
	} else {
		c.line = appendInt(c.line[:0], fieldWidth(uint32(len(d.b)), false), d.i)
	}
	c.w.Write(c.line)
	return nil
}

// write prints a record's datum the way chewrec and dt_print_datum
// share: stacks a frame a line, symbols left in 50 columns, data as
// dt_print_bytes does in width columns, bare with quiet (integers are
// theirs).
func (t textFormatter) write(sb io.StringWriter, d *datum, width int, quiet bool) {
	switch d.kind {
	case datumStack:
		writeFrames(sb, plain, d, StackIndent)
	case datumSym:
		sb.WriteString("  " + padRight(d.str, 50))
	case datumData:
		var b strings.Builder
		t.c.dump(&b, d.b, width, false, quiet)
		sb.WriteString(b.String())
	}
}

// writeFrames prints a stack's frames, each on its own line after
// indent spaces, in format (dt_print_stack, dt_print_ustack): a
// ustack() helper's annotation beneath its frame.
func writeFrames(w io.StringWriter, format func(string) string, d *datum, indent int) {
	if d.depth == 0 {
		return
	}
	w.WriteString("\n")
	pad := strings.Repeat(" ", indent)
	for _, f := range d.frames {
		w.WriteString(pad + format(f.name) + "\n")
		if f.annot != "" {
			w.WriteString(pad + format("  [ "+f.annot[1:]+" ]") + "\n")
		}
	}
}

// plain formats a stack frame as "%s" does.
func plain(s string) string { return s }

// printa prints printa()'s aggregations at once, in the firing's line.
func (t textFormatter) printa(varids []uint32, format uint16) error {
	return t.c.printa(varids, format)
}

// fault and drop print nothing: the consumer has reported them on
// Config.Err.
func (textFormatter) fault(*faultReport)      {}
func (textFormatter) drop(Drop, string) error { return nil }

// finish prints the newline dtrace prints when it stops, then the
// aggregations printa() has not printed, in one sorted walk
// (dtrace_aggregate_print).
func (t textFormatter) finish(aggs bool) error {
	t.c.own().WriteString("\n")
	if !aggs {
		return nil
	}
	return t.c.printAggs(0)
}

// bytes prints data as dt_print_bytes does: as a string when every
// byte is printable up to a NUL followed by NULs only (or to the end),
// else, or with the rawbytes option or raw, as a hex dump.
func (c *Consumer) bytes(b []byte, width int, raw bool) {
	var sb strings.Builder
	c.dump(&sb, b, width, raw, c.cfg.Quiet)
	c.w.WriteString(sb.String())
}

// dump is bytes writing to sb, quiet or not.
func (c *Consumer) dump(sb *strings.Builder, b []byte, width int, raw, quiet bool) {
	if len(b) == 0 {
		return
	}
	if !raw && !c.cfg.RawBytes {
		i := 0
		for ; i < len(b); i++ {
			ch := b[i]
			if isprint(ch) || isspace(ch) || ch == '\b' || ch == '\a' {
				continue
			}
			if ch == 0 && i > 0 {
				// A string, if nothing but NULs follow.
				j := i + 1
				for j < len(b) && b[j] == 0 {
					j++
				}
				if j != len(b) {
					break
				}
				s := string(b[:i])
				switch {
				case quiet:
					sb.WriteString(s)
				case width < 0:
					sb.WriteString("  " + padRight(s, -width))
				default:
					sb.WriteString(" " + padLeft(s, width))
				}
				return
			}
			break
		}
		if i == len(b) {
			// All printable, and no NUL: a string all the same,
			// left-justified whatever the width's sign.
			sb.WriteString("  " + padRight(string(b), max(width, -width)))
			return
		}
	}
	const margin = 5
	fmt.Fprintf(sb, "\n%*s      ", margin, "")
	for i := 0; i < 16; i++ {
		fmt.Fprintf(sb, "  %c", "0123456789abcdef"[i])
	}
	sb.WriteString("  0123456789abcdef\n")
	for i := 0; i < len(b); i += 16 {
		fmt.Fprintf(sb, "%*s%5x:", margin, "", i)
		j := i
		for ; j < i+16 && j < len(b); j++ {
			fmt.Fprintf(sb, " %02x", b[j])
		}
		for ; j%16 != 0; j++ {
			sb.WriteString("   ")
		}
		sb.WriteString("  ")
		for j = i; j < i+16 && j < len(b); j++ {
			ch := b[j]
			if ch < ' ' || ch > '~' {
				ch = '.'
			}
			sb.WriteByte(ch)
		}
		sb.WriteString("\n")
	}
}
