package dif

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// disObjects are hand-built DIFOs shaped as dtrace's compiler shapes
// them, and one with every form and every oddity the listing shows.
func disObjects(t testing.TB) map[string]*Object {
	objs := make(map[string]*Object)

	// trace(timestamp)
	var ir IR
	ir.Ret = IntType(8)
	ir.LoadVar(LDGS, vTS, 1)
	ir.Emit(Ret(1))
	objs["trace_timestamp"] = assemble(t, &ir)

	// /execname == "sshd"/
	ir = IR{Ret: IntType(4)}
	lTrue, lPost := ir.NewLabel(), ir.NewLabel()
	ir.LoadVar(LDGS, vExec, 1)
	ir.Sets("sshd", 2)
	ir.Emit(Cmp(SCMP, 1, 2))
	ir.Branch(BE, lTrue)
	ir.Emit(Mov(0, 1))
	ir.Branch(BA, lPost)
	ir.Mark(lTrue)
	ir.Setx(1, 1)
	ir.Mark(lPost)
	ir.Emit(Ret(1))
	objs["predicate_execname"] = assemble(t, &ir)

	// counts[execname, pid] = strlen(strjoin(self->name, "!")) + this->n + args[1]
	ir = IR{Ret: IntType(8)}
	pid := VarRef{Name: "pid", ID: VarPID, Kind: KindScalar, Scope: ScopeGlobal, Type: IntType(4)}
	counts := VarRef{Name: "counts", ID: VarOtherUBase + 2, Kind: KindArray, Scope: ScopeGlobal, Type: IntType(8)}
	name := VarRef{Name: "name", ID: VarOtherUBase, Kind: KindScalar, Scope: ScopeThread, Type: StringType(256)}
	n := VarRef{Name: "n", ID: VarOtherUBase, Kind: KindScalar, Scope: ScopeLocal, Type: IntType(8)}
	ir.LoadVar(LDTS, name, 1)
	ir.Emit(Pushtr(TypeString, 0, 1))
	ir.Sets("!", 2)
	ir.Emit(Pushtr(TypeString, 0, 2))
	ir.Emit(Call(SubrStrjoin, 1))
	ir.Emit(Flushts())
	ir.Emit(Pushtr(TypeString, 0, 1))
	ir.Emit(Call(SubrStrlen, 1))
	ir.Emit(Flushts())
	ir.LoadVar(LDLS, n, 2)
	ir.Emit(ALU(ADD, 1, 2, 1))
	ir.Setx(1, 2)
	ir.LoadArray(LDGA, vArgs, 2, 2)
	ir.Emit(ALU(ADD, 1, 2, 1))
	ir.LoadVar(LDGS, vExec, 2)
	ir.Emit(Pushtr(TypeString, 0, 2))
	ir.LoadVar(LDGS, pid, 2)
	ir.Emit(Pushtv(TypeCTF, 2))
	ir.StoreVar(STGAA, counts, 1)
	ir.Emit(Popts())
	ir.Emit(Popts())
	ir.Setx(0x7fffffffffffffff, 2)
	ir.StoreVar(STLS, n, 2)
	ir.Emit(Ret(1))
	objs["assoc_strjoin"] = assemble(t, &ir)

	// Everything else: one instruction of each form, illegal opcodes,
	// table references past the tables, odd variable and type values,
	// translator references and relocations.
	var code []Instr
	for _, c := range opcodeTable {
		switch c.op.Form() {
		case FormALU, FormR1RD, FormCmp, FormTst, FormLoad, FormStore, FormRet:
			code = append(code, Fmt(c.op, 1, 2, 3))
		case FormBranch:
			code = append(code, Branch(c.op, uint32(c.op)+100))
		case FormNone:
			code = append(code, Fmt(c.op, 0, 0, 0))
		case FormSetx, FormSets, FormXlate:
			code = append(code, idx(c.op, 1, 4), idx(c.op, 9, 5))
		case FormLda:
			code = append(code, Lda(c.op, 0, 6, 7), Lda(c.op, 0x80, 6, 7))
		case FormLdv, FormStv:
			code = append(code, idx(c.op, VarOtherUBase, 1), idx(c.op, VarOtherUBase+1, 2))
		case FormCall:
			code = append(code, Call(SubrCopyout, 1), Call(SubrStrtoll, 2), Call(99, 3))
		case FormPush:
			code = append(code, Pusht(c.op, 0, 1, 2), Pusht(c.op, 1, 3, 4), Pusht(c.op, 7, 5, 6))
		}
	}
	code = append(code, 0, Instr(0x50ffffff), Instr(0xff000000))
	objs["all_forms"] = &Object{
		Code: code,
		Ints: []uint64{0, 0xffffffffffffffff},
		Strs: []byte("\x00s\x00gvar\x00tvar\x00lvar\x00arr\x00odd\x00ksym\x00usym\x00"),
		Vars: []Var{
			{Name: 3, ID: VarOtherUBase, Kind: KindScalar, Scope: ScopeGlobal, Flags: FlagRef, Type: IntType(4)},
			{Name: 8, ID: VarOtherUBase, Kind: KindArray, Scope: ScopeThread, Flags: FlagMod,
				Type: Type{Kind: TypeCTF, CtfKind: CTFStruct, Flags: TFByURef, Size: 24}},
			{Name: 13, ID: VarOtherUBase, Kind: KindScalar, Scope: ScopeLocal, Flags: FlagRef | FlagMod,
				Type: Type{Kind: TypeCTF, CtfKind: CTFPointer, Size: 8}},
			{Name: 18, ID: 0, Kind: KindArray, Scope: ScopeGlobal, Type: Type{Kind: TypeCTF, CtfKind: CTFArray, Flags: TFByRef, Size: 80}},
			{Name: 22, ID: VarOtherUBase + 1, Kind: 7, Scope: 9, Flags: 0x14 | FlagMod,
				Type: Type{Kind: 5, CtfKind: 14, Flags: TFByRef | TFByURef, Size: 1}},
			{Name: 500, ID: 0x80, Kind: KindArray, Scope: ScopeThread, Type: Type{Kind: TypeString, Flags: TFByRef, Size: 256}},
		},
		Ret:   Type{Kind: TypeCTF, CtfKind: CTFTypedef, Size: 2},
		KRelo: []Relo{{Name: 26, Type: RelocSetx, Offset: 8}},
		URelo: []Relo{{Name: 31, Type: RelocSetx, Offset: 0, Data: 5}, {Name: 31, Type: RelocDOFRel, Offset: 8, Data: 7}},
		Xlate: []XlateRef{
			{Xlator: 4, Member: 0, Arg: 0, Name: "pr_pid", Type: "pid_t"},
			{Xlator: 4, Member: 3, Arg: -1, Name: "pr_fname", Type: "char [16]"},
		},
	}
	return objs
}

func TestDisassembleGolden(t *testing.T) {
	for name, o := range disObjects(t) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Disassemble(&buf, o, "0x0x8004f1c00"); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", name+".dis")
			if *update {
				if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("listing differs from %s:\n%s", golden, buf.Bytes())
			}
		})
	}
}

// TestDisassembleLayout pins the column layout of dt_dis independently of
// the golden files.
func TestDisassembleLayout(t *testing.T) {
	var ir IR
	ir.Ret = IntType(4)
	ir.Setx(1, 1)
	ir.Emit(Ret(1))
	o := assemble(t, &ir)
	var buf bytes.Buffer
	if err := Disassemble(&buf, o, "0x0x1"); err != nil {
		t.Fatal(err)
	}
	want := "\nDIFO 0x0x1 returns D type (integer) (size 4)\n" +
		"OFF OPCODE      INSTRUCTION\n" +
		"00: 25000001    setx DT_INTEGER[0], %r1\t\t! 0x1\n" +
		"01: 23000001    ret  %r1\n"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}

	buf.Reset()
	if err := Disassemble(&buf, o, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "\nDIFO 0x0x") {
		t.Errorf("default title: %q", buf.String())
	}
}

func TestTypeString(t *testing.T) {
	for _, c := range []struct {
		t    Type
		want string
	}{
		{IntType(8), "D type (integer) (size 8)"},
		{StringType(256), "string (unknown) by ref (size 256)"},
		{Type{Kind: TypeCTF, CtfKind: CTFStruct, Flags: TFByURef, Size: 12}, "D type (struct) by user ref (size 12)"},
		{Type{Kind: 9, CtfKind: 20}, "0x9 (0x14) (size 0)"},
		{Type{CtfKind: CTFRestrict}, "D type (restrict) (size 0)"},
	} {
		if got := c.t.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.t, got, c.want)
		}
	}
}
