package printf

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/diag"
)

// A Format is a parsed format string: conversions, each preceded by the
// literal text before it, and the text after the last one.
type Format struct {
	Convs []Conv
	Tail  string
}

// A Conv is one conversion of a format.
type Conv struct {
	Prefix string // literal text between the previous conversion and this one
	Text   string // the conversion as written, from '%' to its conversion character
	Flags  flags
	Width  int    // field width; 0 when none is given; %? gives a pointer's width, 16
	Prec   int    // precision; 0 when none is given, which dtrace does not tell from .0
	Length string // length modifier: "", "h", "l", "ll", "L" or "w"
	Verb   byte   // conversion character: 'd', 's', 'k', '%', …
	Kind   kind

	// Out is the printf(3) conversion, with its length modifier, that
	// the value is printed with: the conversion's own name after Parse,
	// as dtrace's consumer has it; after Check, the one dtrace chooses
	// for the argument's type ("lli" for %d of a long).
	Out string

	spec *spec
}

// flags are a conversion's flags.
type flags uint16

// The flags. ZeroPad and Left cancel each other: the later one wins, as
// in dtrace.
const (
	Alt      flags = 1 << iota // '#'
	ZeroPad                    // '0'
	Left                       // '-'
	Plus                       // '+'
	Space                      // ' '
	group                      // '\'': thousands grouping
	AggValue                   // '@': printa's aggregated value, not a key
	DynWidth                   // '*': the width is an argument
	DynPrec                    // ".*": the precision is an argument
)

// kind says how a conversion prints its value. Each is one of dtrace's
// print routines.
type kind uint8

// The kinds.
const (
	Percent    kind = iota // %%: a percent sign; takes no value
	Signed                 // %c %i %hd %ld %lld %lc %wc …
	Unsigned               // %o %u %x %X %p %hu %lx …
	Decimal                // %d: signed or unsigned as its value's type is
	Float                  // %e %E %f %g %G and their L forms
	Addr                   // %a: a kernel address as symbol+offset
	UAddr                  // %A: a user address as symbol+offset
	Stack                  // %k: a stack(), ustack() or jstack() value
	Time                   // %Y: nanoseconds since the epoch as a date
	RFC822Time             // %T: the same, as RFC 822 writes dates
	Port                   // %P: a port number as a service name
	InetAddr               // %I: an address string as a host name
	String                 // %s
	EscString              // %S: a string with C escapes
	EscChar                // %C: a character with C escapes
	WideString             // %ls %ws
)

// name is the conversion's name in dtrace's table and messages: its
// length modifier and character, "lld".
func (c *Conv) name() string { return c.spec.name }

// maxLength is how many length modifier letters dtrace keeps; it drops
// the rest silently, so %hhhhhhhhd is reported as %hhhhhhd.
const maxLength = 6

// Parse parses a format string as dtrace does when it compiles a
// printf-like action. The format ends at its first NUL byte, as a C
// string does. Errors are *Error values with tag D_SYNTAX.
func Parse(format string) (*Format, error) {
	format = cString(format)
	f := &Format{Convs: make([]Conv, 0, strings.Count(format, "%"))}
	q := 0 // start of the literal text before the next conversion
	for {
		p := strings.IndexByte(format[q:], '%')
		if p < 0 {
			break
		}
		p += q
		c, end, err := parseConv(format, p, len(f.Convs)+1)
		if err != nil {
			return nil, err
		}
		c.Prefix = format[q:p]
		f.Convs = append(f.Convs, c)
		q = end
	}
	f.Tail = format[q:]
	return f, nil
}

// parseConv parses the conversion that starts with the '%' at s[p]; n is
// its number in messages. It returns the conversion and the offset just
// past it.
//
// Flags, width, precision and length letters may come in any order and
// repeat, as dt_printf_create allows; a later width or precision
// replaces an earlier one.
func parseConv(s string, p, n int) (Conv, int, error) {
	var c Conv
	var name [maxLength + 1]byte
	nlen := 0
	dot := false
	digits := 0 // numbers read since the start or the '.'
	i := p
	for {
		i++
		if i == len(s) {
			return c, 0, syntaxErr("format conversion #%d name expected before end of format string", n)
		}
		ch := s[i]
		switch ch {
		case '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if ch == '0' && !dot && digits == 0 {
				c.Flags = c.Flags&^Left | ZeroPad
				continue
			}
			// C's int: a width too long for it wraps as dtrace's does.
			var v int32
			for ; i < len(s) && isDigit(s[i]); i++ {
				v = v*10 + int32(s[i]-'0')
			}
			i--
			if dot {
				c.Prec = int(v)
			} else {
				c.Width = int(v)
			}
			digits++
		case '#':
			c.Flags |= Alt
		case '*':
			dyn := DynWidth
			if dot {
				dyn = DynPrec
			}
			if c.Flags&dyn != 0 {
				// dtrace names the precision whichever it was.
				return c, 0, syntaxErr("format conversion #%d has more than one '*' specified for the output precision", n)
			}
			c.Flags |= dyn
		case '+':
			c.Flags |= Plus
		case '-':
			c.Flags = c.Flags&^ZeroPad | Left
		case '.':
			if dot {
				return c, 0, syntaxErr("format conversion #%d has more than one '.' specified", n)
			}
			dot = true
			digits = 0
		case '?':
			c.Width = 16 // a pointer's width in hex digits, LP64
		case '@':
			c.Flags |= AggValue
		case '\'':
			c.Flags |= group
		case ' ':
			c.Flags |= Space
		case '$':
			return c, 0, syntaxErr("format conversion #%d uses unsupported positional format (%%n$)", n)
		case '%':
			if i != p+1 {
				return c, 0, syntaxErr("format conversion #%d cannot be combined with other format flags: %%%%", n)
			}
			return finishConv(c, s, p, i, lookupSpec("%"))
		case 'h', 'l', 'L', 'w':
			if nlen < maxLength {
				name[nlen] = ch
				nlen++
			}
		default:
			name[nlen] = ch
			nlen++
			sp := lookupSpec(string(name[:nlen]))
			if sp == nil {
				return c, 0, syntaxErr("format conversion #%d is undefined: %%%s", n, string(name[:nlen]))
			}
			return finishConv(c, s, p, i, sp)
		}
	}
}

// finishConv completes the conversion from s[p] to s[i] with what its
// table entry sp says.
func finishConv(c Conv, s string, p, i int, sp *spec) (Conv, int, error) {
	c.spec = sp
	c.Text = s[p : i+1]
	c.Length = sp.name[:len(sp.name)-1]
	c.Verb = sp.name[len(sp.name)-1]
	c.Kind = sp.kind
	c.Out = sp.defaultOut()
	return c, i + 1, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func syntaxErr(format string, args ...any) error {
	return &Error{Tag: diag.D_SYNTAX, Msg: fmt.Sprintf(format, args...), Arg: 0}
}

// String returns the format as dtrace records it in DOF: flags in a
// fixed order, a width or precision only when not zero, and each
// conversion as Out, except those that print text (%s, %a, %k, …), which
// keep their own name for the consumer to find its print routine.
//
// Like dtrace's, the result does not always read back as the same
// format: ".*" is written before the width, so "%5.*s" becomes "%.*5s",
// whose 5 is a precision.
func (f *Format) String() string {
	var b strings.Builder
	for i := range f.Convs {
		c := &f.Convs[i]
		b.WriteString(c.Prefix)
		b.WriteByte('%')
		for _, fl := range flagText {
			if c.Flags&fl.flag != 0 {
				b.WriteString(fl.text)
			}
		}
		if c.Width != 0 {
			b.WriteString(strconv.Itoa(c.Width))
		}
		if c.Prec != 0 {
			b.WriteByte('.')
			b.WriteString(strconv.Itoa(c.Prec))
		}
		if c.spec.ofmt == "s" {
			b.WriteString(c.name())
		} else {
			b.WriteString(c.Out)
		}
	}
	b.WriteString(f.Tail)
	return b.String()
}

// flagText is the order in which dtrace writes flags back.
var flagText = [...]struct {
	flag flags
	text string
}{
	{Alt, "#"}, {ZeroPad, "0"}, {Left, "-"}, {Plus, "+"}, {DynWidth, "*"},
	{DynPrec, ".*"}, {group, "'"}, {Space, " "}, {AggValue, "@"},
}
