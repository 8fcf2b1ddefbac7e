package consumer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/record"
)

// A TypeTable resolves the type references that print()'s records
// carry as their format (types.Table, filled by the compiler).
type typeTable interface {
	Lookup(ref string) (types.Type, error)
}

// print prints the value of a print() record, data, as the type its
// format names, the way dtrace_print does: mdb's "::print -tn", one
// member a line. It reports false when the format names no type the
// table has, and the record is then printed as trace() prints it, as
// dtrace falls back.
func (c *Consumer) print(rec *record.Rec, data []byte) (bool, error) {
	if c.cfg.Types == nil {
		return false, nil
	}
	ref, err := c.desc.Format(rec.Format)
	if err != nil {
		return false, err
	}
	t, err := c.cfg.Types.Lookup(ref)
	if err != nil || t.Size() > int64(len(data)) {
		return false, nil
	}
	p := &typePrinter{c: c, w: c.w, data: data}
	p.visit("", t, 0, 0, 0)
	p.trailingBraces(0)
	return true, nil
}

// printedType names the type a print() record's format refers to, or
// returns the format as it is when no table resolves it.
func (c *Consumer) printedType(ref string) string {
	if c.cfg.Types != nil {
		if t, err := c.cfg.Types.Lookup(ref); err == nil {
			return typeName(t)
		}
	}
	return ref
}

// typePrinter walks a value as ctf_type_visit walks its type for
// dt_print_member: the type itself at depth 0, then, for a struct or
// union, each member one level deeper, recursively. Arrays are leaves
// of that walk that walk their elements themselves, each from depth 0
// with nest, the arrays around them, one level deeper.
type typePrinter struct {
	c     *Consumer
	w     *bufio.Writer
	data  []byte // the value, from the start of the array element or record being walked
	depth int    // the depth of the last member printed (pa_depth)
	nest  int    // the nesting of arrays (pa_nest)
}

// visit prints the member called name, of type t, at offset off bits,
// and its members; bits is a bit-field's width, 0 for other members.
func (p *typePrinter) visit(name string, t types.Type, off int64, depth int, bits int64) {
	p.member(name, t, off, depth, bits)
	s, ok := types.Resolve(t).(*types.Struct)
	if !ok || s.Incomplete || depth+p.nest >= maxPrintDepth {
		return
	}
	for _, m := range s.Members() {
		p.visit(m.Name, m.Type, off+m.Offset, depth+1, m.BitSize)
	}
}

// maxPrintDepth bounds the nesting of structs and arrays print()
// walks: C's types cannot contain themselves, but a kernel's type
// information may say so.
const maxPrintDepth = 64

// trailingBraces closes the structs deeper than depth
// (dt_print_trailing_braces): the walk says when a member starts, not
// when a struct ends.
func (p *typePrinter) trailingBraces(depth int) {
	for d := p.depth; d > depth; d-- {
		p.indentBy(d + p.nest - 1)
		p.w.WriteString("}")
		if d != depth+1 {
			p.w.WriteString("\n")
		}
	}
}

func (p *typePrinter) indentBy(n int) { p.w.WriteString(strings.Repeat(" ", 4*n)) }

func (p *typePrinter) indent() { p.indentBy(p.depth + p.nest) }

// structLike reports whether t is a struct or union, as CTF_IS_STRUCTLIKE.
func structLike(t types.Type) bool {
	s, ok := t.(*types.Struct)
	return ok && !s.Incomplete
}

// member prints one member (dt_print_member): its type and name, unless
// it is an element of an array of scalars, then its value.
func (p *typePrinter) member(name string, t types.Type, off int64, depth int, bits int64) {
	p.trailingBraces(depth)
	if depth < p.depth {
		p.w.WriteString("\n")
	}
	p.depth = depth
	rt := types.Resolve(t)
	arrayMember := p.nest != 0 && depth == 0
	brief := arrayMember && !structLike(rt)
	if !brief {
		if arrayMember {
			p.w.WriteString("\n")
		}
		p.indent()
		typ := typeName(t)
		p.w.WriteString(typ)
		if name != "" {
			// "void *b", not "void * b"; an anonymous struct's name
			// ends in a space already.
			if !strings.HasSuffix(typ, "*") && !strings.HasSuffix(typ, " ") {
				p.w.WriteString(" ")
			}
			p.w.WriteString(name)
			if in, ok := rt.(*types.Int); ok {
				width := bits
				if width == 0 {
					width = in.Bytes * 8
				}
				if width%8 != 0 || off%8 != 0 || width/8 > 8 || width/8 != in.Bytes {
					fmt.Fprintf(p.w, " :%d", width)
				}
			}
			p.w.WriteString(" =")
		}
		p.w.WriteString(" ")
	}
	p.value(rt, off, bits)
	if !brief {
		p.w.WriteString("\n")
	}
}

// typeName names t as ctf_type_name does: an anonymous struct, union
// or enum is its keyword and a space.
func typeName(t types.Type) string {
	return strings.ReplaceAll(t.String(), "(anon)", "")
}

// value prints the value of resolved type t at offset off bits, as
// dt_printfuncs does for its kind.
func (p *typePrinter) value(t types.Type, off int64, bits int64) {
	need := t.Size()
	if bits != 0 {
		need = (off%8 + bits + 7) / 8
	}
	if off < 0 || need < 0 || off/8 > int64(len(p.data)) || need > int64(len(p.data))-off/8 {
		// Only a type whose members lie about its size gets here.
		p.w.WriteString("<beyond the record>")
		return
	}
	at := p.data[off/8:]
	switch t := t.(type) {
	case *types.Int:
		p.int(t, at, off, bits)
	case *types.Float:
		switch t.Bytes {
		case 4:
			p.w.WriteString(cfloat(float64(math.Float32frombits(binary.LittleEndian.Uint32(at)))))
		case 8:
			p.w.WriteString(cfloat(math.Float64frombits(binary.LittleEndian.Uint64(at))))
		default:
			p.w.WriteString("<unknown encoding>")
		}
	case *types.Pointer:
		p.pointer(t, at)
	case *types.Func:
		// A function is no value: its size is 0.
		p.hex(at, 0)
	case *types.Array:
		p.array(t.Elem, t.Len, at)
	case *types.String:
		// D's string is CTF's typedef of char [strsize].
		p.array(types.Char, t.Bytes, at)
	case *types.Struct:
		if t.Incomplete {
			p.w.WriteString("<forward decl>")
			return
		}
		p.w.WriteString("{")
	case *types.Enum:
		p.enum(t, at)
	default:
		fmt.Fprintf(p.w, "<invalid type %s>", t)
	}
}

// cfloat formats a float as "%+.7e" does.
func cfloat(f float64) string {
	c := conv{plus: true, prec: 7, verb: 'e'}
	return string(c.float(nil, f))
}

// int prints an integer: a bit-field's bits, a character quoted, other
// integers in hexadecimal (dt_print_int).
func (p *typePrinter) int(t *types.Int, at []byte, off int64, bits int64) {
	if bits == 0 {
		bits = t.Bytes * 8
	}
	size := bits / 8
	if size > 8 || bits%8 != 0 || size&(size-1) != 0 {
		// print_bitfield, reading every byte the field spans.
		n := (off%8 + bits + 7) / 8
		var v uint64
		for i := int64(0); i < n && i < 8; i++ {
			v |= uint64(at[i]) << (8 * i)
		}
		v >>= uint(off % 8)
		if bits < 64 {
			v &= 1<<uint(bits) - 1
		}
		p.w.WriteString(altHex(v))
		return
	}
	if isChar(t) && bits == 8 {
		switch c := int8(at[0]); {
		case c >= 0x20 && c < 0x7f:
			fmt.Fprintf(p.w, "'%c'", c)
		case c == 0:
			p.w.WriteString(`'\0'`)
		default:
			fmt.Fprintf(p.w, `'\%03o'`, uint32(int32(c)))
		}
		return
	}
	p.hex(at, size)
}

// isChar reports whether t is a signed character type, which print()
// prints as characters (CTF_IS_CHAR). BTF gives the kernel's plain char
// no sign (pahole writes no encoding for it), so a char is signed where
// C makes it so: on x86.
func isChar(t *types.Int) bool {
	if !t.Char || t.Bytes != 1 {
		return false
	}
	return t.Signed || t.Name == "char" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "386")
}

// hex prints an integer of size bytes in hexadecimal (dt_print_hex).
func (p *typePrinter) hex(at []byte, size int64) {
	switch size {
	case 1:
		p.w.WriteString(altHex(uint64(at[0])))
	case 2:
		p.w.WriteString(altHex(uint64(binary.LittleEndian.Uint16(at))))
	case 4:
		p.w.WriteString(altHex(uint64(binary.LittleEndian.Uint32(at))))
	case 8:
		p.w.WriteString(altHex(binary.LittleEndian.Uint64(at)))
	default:
		fmt.Fprintf(p.w, "<invalid size %d>", size)
	}
}

// altHex formats v as C's "%#x": 0 has no 0x.
func altHex(v uint64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%#x", v)
}

// pointer prints a pointer in hexadecimal, or a function pointer as the
// kernel function it points to when there is one (dt_print_ptr).
func (p *typePrinter) pointer(t *types.Pointer, at []byte) {
	if _, ok := t.Elem.(*types.Func); ok && p.c.cfg.Symbols != nil {
		pc := binary.LittleEndian.Uint64(at)
		if s, ok := p.c.cfg.Symbols.Kernel(pc); ok && s.Name != "" {
			fmt.Fprintf(p.w, "%s`%s", s.Object, s.Name)
			return
		}
	}
	p.hex(at, 8)
}

// array prints n elements of type elem (dt_print_array): characters up
// to a NUL as a string, other elements each walked as a value of its
// own, one array deeper.
func (p *typePrinter) array(elem types.Type, n int64, at []byte) {
	size := elem.Size()
	re := types.Resolve(elem)
	isString := false
	if in, ok := re.(*types.Int); ok && isChar(in) && n > 0 {
		i := int64(0)
		var c byte
		for ; i < n; i++ {
			c = at[i*size]
			if c < 0x20 || c >= 0x7f {
				break
			}
		}
		isString = i != n && c == 0
	}
	// A string at the top prints without brackets: print("foo") is
	// string "foo".
	brackets := !isString || p.depth != 0
	if brackets {
		p.w.WriteString("[ ")
	}
	if isString {
		p.w.WriteString(`"`)
		for i := int64(0); i < n && at[i*size] != 0; i++ {
			p.w.WriteByte(at[i*size])
		}
		p.w.WriteString(`"`)
	} else {
		for i := int64(0); i < n; i++ {
			q := *p
			q.nest += p.depth + 1
			q.depth = 0
			q.data = at[i*size:]
			q.visit("", elem, 0, 0, 0)
			q.trailingBraces(0)
			if i != n-1 {
				p.w.WriteString(", ")
			} else if structLike(re) {
				p.w.WriteString("\n")
			}
		}
	}
	if brackets {
		if structLike(re) {
			p.indent()
		} else {
			p.w.WriteString(" ")
		}
		p.w.WriteString("]")
	}
}

// enum prints an enumerator's name, or the value when none has it
// (dt_print_enum).
func (p *typePrinter) enum(t *types.Enum, at []byte) {
	var v int64
	switch t.Bytes {
	case 1:
		v = int64(at[0])
	case 2:
		v = int64(binary.LittleEndian.Uint16(at))
	case 4:
		v = int64(int32(binary.LittleEndian.Uint32(at)))
	default:
		fmt.Fprintf(p.w, "<invalid enum size %d>", t.Bytes)
		return
	}
	for _, e := range t.Values {
		if e.Value == v {
			p.w.WriteString(e.Name)
			return
		}
	}
	fmt.Fprintf(p.w, "%d", v)
}
