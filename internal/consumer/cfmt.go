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

// pad appends body, after the prefix (sign, 0x) and zeros zeroes (a
// precision's), padded to the conversion's width: with spaces before,
// zeroes between prefix and body, or spaces after. It appends to dst
// so that a firing's printf() costs no allocation.
func pad[T string | []byte](c *conv, dst []byte, prefix string, zeros int, body T, zeroOK bool) []byte {
	n := c.width - len(prefix) - zeros - len(body)
	switch {
	case n > 0 && c.left:
		dst = append(dst, prefix...)
		dst = appendRepeat(dst, '0', zeros)
		dst = append(dst, body...)
		return appendRepeat(dst, ' ', n)
	case n > 0 && c.zero && zeroOK:
		zeros += n
	case n > 0:
		dst = appendRepeat(dst, ' ', n)
	}
	dst = append(dst, prefix...)
	dst = appendRepeat(dst, '0', zeros)
	return append(dst, body...)
}

// appendRepeat appends n bytes ch.
func appendRepeat(dst []byte, ch byte, n int) []byte {
	for ; n > 0; n-- {
		dst = append(dst, ch)
	}
	return dst
}

// int appends an integer for %d %i (signed) and %u %o %x %X %p
// (unsigned). %p, which dtrace never records (it records %x or %llx in
// its place), prints as FreeBSD's libc prints it: "0x" and hexadecimal.
// v holds the value; neg says a signed value is negative (v is then its
// magnitude).
func (c *conv) int(dst []byte, v uint64, neg bool) []byte {
	base := 10
	switch c.verb {
	case 'o':
		base = 8
	case 'x', 'X', 'p':
		base = 16
	}
	var buf [64]byte
	digits := strconv.AppendUint(buf[:0], v, base)
	if c.verb == 'X' {
		for i, d := range digits {
			if d >= 'a' {
				digits[i] = d - 'a' + 'A'
			}
		}
	}
	if c.prec == 0 && v == 0 {
		digits = digits[:0]
	}
	zeros := max(c.prec-len(digits), 0)
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
		if c.alt && zeros == 0 && (len(digits) == 0 || digits[0] != '0') {
			zeros = 1
		}
	case 'x':
		if c.alt && v != 0 {
			prefix = "0x"
		}
	case 'X':
		if c.alt && v != 0 {
			prefix = "0X"
		}
	case 'p':
		prefix = "0x"
	}
	// A precision turns zero padding off.
	return pad(c, dst, prefix, zeros, digits, c.prec < 0)
}

// signed appends a signed integer.
func (c *conv) signed(dst []byte, v int64) []byte {
	if v < 0 {
		return c.int(dst, uint64(-v), true) // -MinInt64 wraps to its magnitude
	}
	return c.int(dst, uint64(v), false)
}

// char appends %c.
func (c *conv) char(dst []byte, b byte) []byte {
	one := [1]byte{b}
	return pad(c, dst, "", 0, one[:], true)
}

// str appends %s: at most prec bytes of s.
func str[T string | []byte](c *conv, dst []byte, s T) []byte {
	if c.prec >= 0 && len(s) > c.prec {
		s = s[:c.prec]
	}
	return pad(c, dst, "", 0, s, true)
}

// float appends %e %E %f %F %g %G.
func (c *conv) float(dst []byte, v float64) []byte {
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
		return pad(c, dst, prefix, 0, s, false)
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
	return pad(c, dst, prefix, 0, body, true)
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
