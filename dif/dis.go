package dif

import (
	"bytes"
	"fmt"
	"io"
)

// instrText writes one instruction as dt_dis does. With an object it adds
// the comments that come from the object's tables (variable names,
// integer and string constants, translator members); the comments that
// depend on the instruction alone (the subroutine of call, the tuple type
// of pushtr and pushtv) are always written.
func instrText(in Instr, o *Object) string {
	var b bytes.Buffer
	writeInstr(&b, in, o)
	return b.String()
}

func writeInstr(b *bytes.Buffer, in Instr, o *Object) {
	op := in.Op()
	name := "(illegal opcode)"
	if op.Valid() {
		name = op.String()
	}
	switch op.Form() {
	case FormALU:
		fmt.Fprintf(b, "%-4s %%r%d, %%r%d, %%r%d", name, in.R1(), in.R2(), in.RD())
	case FormR1RD:
		fmt.Fprintf(b, "%-4s %%r%d, %%r%d", name, in.R1(), in.RD())
	case FormCmp:
		fmt.Fprintf(b, "%-4s %%r%d, %%r%d", name, in.R1(), in.R2())
	case FormTst:
		fmt.Fprintf(b, "%-4s %%r%d", name, in.R1())
	case FormBranch:
		fmt.Fprintf(b, "%-4s %d", name, in.Label())
	case FormLoad:
		fmt.Fprintf(b, "%-4s [%%r%d], %%r%d", name, in.R1(), in.RD())
	case FormStore:
		fmt.Fprintf(b, "%-4s %%r%d, [%%r%d]", name, in.R1(), in.RD())
	case FormRet:
		fmt.Fprintf(b, "%-4s %%r%d", name, in.RD())
	case FormSetx:
		i := in.Index()
		fmt.Fprintf(b, "%-4s DT_INTEGER[%d], %%r%d", name, i, in.RD())
		if o != nil && int(i) < len(o.Ints) {
			fmt.Fprintf(b, "\t\t! 0x%x", o.Ints[i])
		}
	case FormSets:
		off := in.Index()
		fmt.Fprintf(b, "%-4s DT_STRING[%d], %%r%d", name, off, in.RD())
		if o != nil {
			if s, ok := o.Str(uint32(off)); ok {
				fmt.Fprintf(b, "\t\t! \"%s\"", s)
			}
		}
	case FormLda:
		v := uint16(in.R1())
		fmt.Fprintf(b, "%-4s DT_VAR(%d), %%r%d, %%r%d", name, v, in.R2(), in.RD())
		varComment(b, o, op, v)
	case FormLdv:
		fmt.Fprintf(b, "%-4s DT_VAR(%d), %%r%d", name, in.Var(), in.RD())
		varComment(b, o, op, in.Var())
	case FormStv:
		fmt.Fprintf(b, "%-4s %%r%d, DT_VAR(%d)", name, in.RS(), in.Var())
		varComment(b, o, op, in.Var())
	case FormCall:
		fmt.Fprintf(b, "%-4s DIF_SUBR(%d), %%r%d\t\t! %s", name, in.Subr(), in.RD(), SubrName(in.Subr()))
	case FormPush:
		pad := "\t"
		if op == PUSHTV {
			fmt.Fprintf(b, "%-4s DT_TYPE(%d), %%r%d", name, in.Type(), in.RS())
			pad = "\t\t"
		} else {
			fmt.Fprintf(b, "%-4s DT_TYPE(%d), %%r%d, %%r%d", name, in.Type(), in.R2(), in.RS())
		}
		switch in.Type() {
		case TypeCTF:
			fmt.Fprintf(b, "%s! DT_TYPE(%d) = D type", pad, in.Type())
		case TypeString:
			fmt.Fprintf(b, "%s! DT_TYPE(%d) = string", pad, in.Type())
		}
	case FormXlate:
		x := in.Index()
		fmt.Fprintf(b, "%-4s DT_XLREF[%d], %%r%d", name, x, in.RD())
		if o != nil && int(x) < len(o.Xlate) {
			fmt.Fprintf(b, "\t\t! DT_XLREF[%d] = %d.%s", x, o.Xlate[x].Xlator, o.Xlate[x].Name)
		}
	default: // FormNone and illegal opcodes
		b.WriteString(name)
	}
}

// varComment adds the name of the variable an access names when the
// object's variable table has it in the scope the opcode implies.
func varComment(b *bytes.Buffer, o *Object, op Op, id uint16) {
	if o == nil {
		return
	}
	scope, _ := op.Scope()
	v, ok := o.LookupVar(uint32(id), scope)
	if !ok {
		return
	}
	if s, ok := o.Str(v.Name); ok {
		fmt.Fprintf(b, "\t\t! DT_VAR(%d) = \"%s\"", id, s)
	}
}

// String describes the type as dtrace's disassembler does, e.g.
// "D type (integer) (size 8)" or "string (unknown) by ref (size 256)".
func (t Type) String() string {
	var kind, ckind string
	switch t.Kind {
	case TypeCTF:
		kind = "D type"
	case TypeString:
		kind = "string"
	default:
		kind = fmt.Sprintf("0x%x", t.Kind)
	}
	if int(t.CtfKind) < len(ctfKindNames) {
		ckind = ctfKindNames[t.CtfKind]
	} else {
		ckind = fmt.Sprintf("0x%x", t.CtfKind)
	}
	if t.Flags&(TFByRef|TFByURef) != 0 {
		user := ""
		if t.Flags&TFByURef != 0 {
			user = "user "
		}
		return fmt.Sprintf("%s (%s) by %sref (size %d)", kind, ckind, user, t.Size)
	}
	return fmt.Sprintf("%s (%s) (size %d)", kind, ckind, t.Size)
}

var ctfKindNames = [...]string{
	CTFUnknown: "unknown", CTFInteger: "integer", CTFFloat: "float",
	CTFPointer: "pointer", CTFArray: "array", CTFFunction: "function",
	CTFStruct: "struct", CTFUnion: "union", CTFEnum: "enum",
	CTFForward: "forward", CTFTypedef: "typedef", CTFVolatile: "volatile",
	CTFConst: "const", CTFRestrict: "restrict",
}

// Disassemble writes the listing dtrace -S prints for a DIFO (dt_dis):
// a blank line, "DIFO <title> returns <type>", the instructions with
// their offsets, words and comments, then the variable table, the
// translator references and the kernel and user relocations when the
// object has them. dtrace prints the DIFO's address as the title
// ("0x%p"); an empty title does the same with the Object's address.
// Names whose string-table offsets are out of range print as empty.
func Disassemble(w io.Writer, o *Object, title string) error {
	if title == "" {
		title = fmt.Sprintf("0x%p", o)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "\nDIFO %s returns %s\n", title, o.Ret.String())
	fmt.Fprintf(&b, "%-3s %-8s    %s\n", "OFF", "OPCODE", "INSTRUCTION")
	for i, in := range o.Code {
		fmt.Fprintf(&b, "%02d: %08x    ", i, uint32(in))
		writeInstr(&b, in, o)
		b.WriteByte('\n')
	}

	if len(o.Vars) != 0 {
		fmt.Fprintf(&b, "\n%-16s %-4s %-3s %-3s %-4s %s\n", "NAME", "ID", "KND", "SCP", "FLAG", "TYPE")
	}
	for i := range o.Vars {
		v := &o.Vars[i]
		var kind, scope string
		switch v.Kind {
		case KindArray:
			kind = "arr"
		case KindScalar:
			kind = "scl"
		default:
			kind = fmt.Sprint(v.Kind)
		}
		switch v.Scope {
		case ScopeGlobal:
			scope = "glb"
		case ScopeThread:
			scope = "tls"
		case ScopeLocal:
			scope = "loc"
		default:
			scope = fmt.Sprint(v.Scope)
		}
		flags := ""
		if other := v.Flags &^ (FlagRef | FlagMod); other != 0 {
			flags = fmt.Sprintf("/0x%x", other)
		}
		if v.Flags&FlagRef != 0 {
			flags += "/r"
		}
		if v.Flags&FlagMod != 0 {
			flags += "/w"
		}
		if flags != "" {
			flags = flags[1:]
		}
		name, _ := o.Str(v.Name)
		fmt.Fprintf(&b, "%-16s %-4d %-3s %-3s %-4s %s\n", name, v.ID, kind, scope, flags, v.Type.String())
	}

	if len(o.Xlate) != 0 {
		fmt.Fprintf(&b, "\n%-4s %-3s %-12s %s\n", "XLID", "ARG", "MEMBER", "TYPE")
	}
	for _, x := range o.Xlate {
		fmt.Fprintf(&b, "%-4d %-3d %-12s %s\n", x.Xlator, x.Arg, x.Name, x.Type)
	}

	relocs := func(tag string, rs []Relo) {
		if len(rs) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%-4s %-8s %-8s %s\n", tag, "OFFSET", "DATA", "NAME")
		for _, r := range rs {
			name, _ := o.Str(r.Name)
			fmt.Fprintf(&b, "%-4d %-8d %-8d %s\n", r.Type, r.Offset, r.Data, name)
		}
	}
	relocs("KREL", o.KRelo)
	relocs("UREL", o.URelo)

	_, err := w.Write(b.Bytes())
	return err
}
