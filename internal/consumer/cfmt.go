package consumer

import (
	"math"
	"strconv"
	"strings"
)

// conv is one printf(3) conversion as dtrace's consumer hands it to the
// C library: flags, width and precision, and the conversion character.
// cfmt formats values as FreeBSD's libc does in the C locale.
type conv struct {
	alt, zero, left, plus, space bool
	width                        int
	prec                         int // < 0: none
	verb                         byte
}

// pad pads body, after the prefix (sign, 0x), to the conversion's width:
// with spaces before, zeroes between prefix and body, or spaces after.
func (c *conv) pad(prefix, body string, zeroOK bool) string {
	n := c.width - len(prefix) - len(body)
	switch {
	case n <= 0:
		return prefix + body
	case c.left:
		return prefix + body + strings.Repeat(" ", n)
	case c.zero && zeroOK:
		return prefix + strings.Repeat("0", n) + body
	}
	return strings.Repeat(" ", n) + prefix + body
}

// int formats an integer for %d %i (signed) and %u %o %x %X %p
// (unsigned). %p, which dtrace never records (it records %x or %llx in
// its place), prints as FreeBSD's libc prints it: "0x" and hexadecimal.
// v holds the value; neg says a signed value is negative (v is then its
// magnitude).
func (c *conv) int(v uint64, neg bool) string {
	base := uint64(10)
	switch c.verb {
	case 'o':
		base = 8
	case 'x', 'X', 'p':
		base = 16
	}
	digits := strconv.FormatUint(v, int(base))
	if c.verb == 'X' {
		digits = strings.ToUpper(digits)
	}
	if c.prec == 0 && v == 0 {
		digits = ""
	}
	if c.prec > len(digits) {
		digits = strings.Repeat("0", c.prec-len(digits)) + digits
	}
	prefix := ""
	switch c.verb {
	case 'd', 'i':
		switch {
		case neg:
			prefix = "-"
		case c.plus:
			prefix = "+"
		case c.space:
			prefix = " "
		}
	case 'o':
		if c.alt && !strings.HasPrefix(digits, "0") {
			digits = "0" + digits
		}
	case 'x', 'X':
		if c.alt && v != 0 {
			prefix = "0" + string(c.verb)
		}
	case 'p':
		prefix = "0x"
	}
	// A precision turns zero padding off.
	return c.pad(prefix, digits, c.prec < 0)
}

// signed formats a signed integer.
func (c *conv) signed(v int64) string {
	if v < 0 {
		return c.int(uint64(-v), true) // -MinInt64 wraps to its magnitude
	}
	return c.int(uint64(v), false)
}

// char formats %c.
func (c *conv) char(b byte) string { return c.pad("", string([]byte{b}), true) }

// str formats %s: at most prec bytes of s.
func (c *conv) str(s string) string {
	if c.prec >= 0 && len(s) > c.prec {
		s = s[:c.prec]
	}
	return c.pad("", s, true)
}

// float formats %e %E %f %F %g %G.
func (c *conv) float(v float64) string {
	prefix := ""
	switch {
	case math.Signbit(v):
		prefix, v = "-", -v
	case c.plus:
		prefix = "+"
	case c.space:
		prefix = " "
	}
	upper := c.verb == 'E' || c.verb == 'F' || c.verb == 'G'
	if math.IsInf(v, 0) || math.IsNaN(v) {
		s := "inf"
		if math.IsNaN(v) {
			s = "nan"
		}
		if upper {
			s = strings.ToUpper(s)
		}
		return c.pad(prefix, s, false)
	}
	prec := c.prec
	if prec < 0 {
		prec = 6
	}
	var body string
	switch c.verb {
	case 'e', 'E':
		body = expForm(v, prec)
		if c.alt && prec == 0 {
			body = strings.Replace(body, "e", ".e", 1)
		}
	case 'f', 'F':
		body = strconv.FormatFloat(v, 'f', prec, 64)
		if c.alt && prec == 0 {
			body += "."
		}
	default: // g, G
		if prec == 0 {
			prec = 1
		}
		e := expForm(v, prec-1)
		x, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
		if x < -4 || x >= prec {
			body = e
		} else {
			body = strconv.FormatFloat(v, 'f', prec-1-x, 64)
		}
		if !c.alt {
			body = trimZeros(body)
		} else if !strings.Contains(body, ".") {
			if i := strings.IndexByte(body, 'e'); i >= 0 {
				body = body[:i] + "." + body[i:]
			} else {
				body += "."
			}
		}
	}
	if upper {
		body = strings.ToUpper(body)
	}
	return c.pad(prefix, body, true)
}

// expForm formats v as C's %.*e: at least two exponent digits.
func expForm(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'e', prec, 64)
	i := strings.IndexByte(s, 'e')
	exp := s[i+2:]
	if len(exp) < 2 {
		exp = "0" + exp
	}
	return s[:i+2] + exp
}

// trimZeros drops a fraction's trailing zeroes, and its point if
// nothing is left of it, as %g does.
func trimZeros(s string) string {
	exp := ""
	if i := strings.IndexByte(s, 'e'); i >= 0 {
		s, exp = s[:i], s[i:]
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(s, "0")
		s = strings.TrimSuffix(s, ".")
	}
	return s + exp
}
