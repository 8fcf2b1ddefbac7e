package dif

import (
	"errors"
	"testing"
)

// base is a small DIFO every check accepts:
//
//	r1 = 5; r2 = "abc"; r3 = timestamp; r4 = self->x
//	r5 = r1 + r3; self->x = r5; if (r5 == 0) r5 = r1; return r5
func base() *Object {
	return &Object{
		Code: []Instr{
			Setx(0, 1),                  // 0
			Sets(1, 2),                  // 1
			Ldv(LDGS, VarTimestamp, 3),  // 2
			Ldv(LDTS, VarOtherUBase, 4), // 3
			ALU(ADD, 1, 3, 5),           // 4
			Stv(STTS, VarOtherUBase, 5), // 5
			Tst(5),                      // 6
			Branch(BNE, 9),              // 7
			Mov(1, 5),                   // 8
			Ret(5),                      // 9
		},
		Ints: []uint64{5, 16},
		Strs: []byte("\x00abc\x00timestamp\x00x\x00"),
		Vars: []Var{
			{Name: 15, ID: VarOtherUBase, Kind: KindScalar, Scope: ScopeThread, Flags: FlagRef | FlagMod, Type: IntType(8)},
			{Name: 5, ID: VarTimestamp, Kind: KindScalar, Scope: ScopeGlobal, Flags: FlagRef, Type: IntType(8)},
		},
		Ret: IntType(8),
	}
}

type refusal struct {
	part   Part
	index  int
	reason string
	strict bool
}

func checkRefusal(t *testing.T, err error, want refusal) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want refusal %q", err, want.reason)
	}
	if e.Part != want.part || e.Index != want.index || e.Reason != want.reason || e.Strict != want.strict {
		t.Errorf("got %s %d %q strict=%v\nwant %s %d %q strict=%v",
			e.Part, e.Index, e.Reason, e.Strict, want.part, want.index, want.reason, want.strict)
	}
	if e.Error() == "" {
		t.Error("empty message")
	}
}

func TestValidateBase(t *testing.T) {
	if err := Validate(base(), Limits{}); err != nil {
		t.Fatal(err)
	}
	if err := Validate(base(), Limits{KernelOnly: true}); err != nil {
		t.Fatal(err)
	}
	checkRefusal(t, Validate(nil, Limits{}), refusal{PartObject, -1, "missing DIF text", false})
	// d_path and d_path_dentry, kdtrace's own codes past DTrace's, are
	// subroutines.
	for _, subr := range []uint16{SubrDPath, SubrDPathDentry} {
		o := base()
		o.Code[8] = Call(subr, 5)
		if err := Validate(o, Limits{}); err != nil {
			t.Errorf("a call of %s: %v", SubrName(subr), err)
		}
	}
}

func code(pc int, reason string) refusal { return refusal{PartCode, pc, reason, false} }

// TestValidateKernel: each of the kernel's refusals, with its reason.
func TestValidateKernel(t *testing.T) {
	set := func(pc int, in Instr) func(o *Object) { return func(o *Object) { o.Code[pc] = in } }
	cases := []struct {
		name string
		lim  Limits
		edit func(o *Object)
		want refusal
	}{
		{"strtab-unterminated", Limits{}, func(o *Object) { o.Strs = append(o.Strs, 'x') },
			refusal{PartStrings, -1, "non-terminating string table", false}},
		{"urelo-type", Limits{}, func(o *Object) { o.URelo = []Relo{{Type: 3}} },
			refusal{PartURelo, 0, "invalid relocation type", false}},
		{"urelo-offset", Limits{}, func(o *Object) { o.URelo = []Relo{{Type: RelocSetx}, {Type: RelocSetx, Offset: 16}} },
			refusal{PartURelo, 1, "bad relocation offset", false}},
		{"urelo-straddle", Limits{}, func(o *Object) { o.URelo = []Relo{{Type: RelocDOFRel, Offset: 9}} },
			refusal{PartURelo, 0, "bad relocation offset", false}},
		{"urelo-misaligned", Limits{}, func(o *Object) { o.URelo = []Relo{{Type: RelocSetx, Offset: 4}} },
			refusal{PartURelo, 0, "misaligned setx relo", false}},
		{"xltab", Limits{}, func(o *Object) { o.Xlate = []XlateRef{{}} },
			refusal{PartObject, -1, "unrecognized DIFO subsection (translator references)", false}},
		{"too-big", Limits{MaxSize: 40}, func(o *Object) {},
			refusal{PartObject, -1, "exceeds maximum size", false}},
		{"no-code", Limits{}, func(o *Object) { o.Code = nil },
			refusal{PartObject, -1, "missing DIF text", false}},
		{"alu-r1", Limits{}, set(4, ALU(ADD, 8, 3, 5)), code(4, "invalid register 8")},
		{"alu-r2", Limits{}, set(4, ALU(SUB, 1, 200, 5)), code(4, "invalid register 200")},
		{"alu-rd", Limits{}, set(4, ALU(MUL, 1, 3, 9)), code(4, "invalid register 9")},
		{"alu-r0", Limits{}, set(4, ALU(OR, 1, 3, 0)), code(4, "cannot write to %r0")},
		{"copys-r0", Limits{}, set(4, Copys(1, 3, 0)), code(4, "cannot write to %r0")},
		{"alu-nregs", Limits{NRegs: 4}, func(o *Object) {}, code(3, "invalid register 4")},
		{"not-reserved", Limits{}, set(8, Fmt(NOT, 1, 1, 5)), code(8, "non-zero reserved bits")},
		{"mov-r0", Limits{}, set(8, Mov(1, 0)), code(8, "cannot write to %r0")},
		{"allocs-r1", Limits{}, set(8, Allocs(10, 5)), code(8, "invalid register 10")},
		{"load-rd", Limits{}, set(8, Load(LDX, 1, 8)), code(8, "invalid register 8")},
		{"uload-reserved", Limits{}, set(8, Fmt(ULDUB, 1, 2, 5)), code(8, "non-zero reserved bits")},
		{"rload-r0", Limits{}, set(8, Load(RLDSW, 1, 0)), code(8, "cannot write to %r0")},
		{"store-0", Limits{}, set(8, Store(STB, 1, 0)), code(8, "cannot write to 0 address")},
		{"store-reserved", Limits{}, set(8, Fmt(STW, 1, 1, 5)), code(8, "non-zero reserved bits")},
		{"cmp-reserved", Limits{}, set(6, Fmt(CMP, 5, 1, 1)), code(6, "non-zero reserved bits")},
		{"scmp-r2", Limits{}, set(6, Cmp(SCMP, 5, 8)), code(6, "invalid register 8")},
		{"tst-reserved", Limits{}, set(6, Fmt(TST, 5, 0, 1)), code(6, "non-zero reserved bits")},
		{"branch-out", Limits{}, set(7, Branch(BNE, 10)), code(7, "invalid branch target 10")},
		{"branch-back", Limits{}, set(7, Branch(BA, 3)), code(7, "backward branch to 3")},
		{"branch-self", Limits{}, set(7, Branch(BLEU, 7)), code(7, "backward branch to 7")},
		{"ret-reserved", Limits{}, set(9, Fmt(RET, 0, 1, 5)), code(9, "non-zero reserved bits")},
		{"ret-reg", Limits{}, set(9, Ret(8)), code(9, "invalid register 8")},
		{"nop-reserved", Limits{}, set(8, Fmt(NOP, 0, 0, 1)), code(8, "non-zero reserved bits")},
		{"popts-reserved", Limits{}, set(8, Fmt(POPTS, 1, 0, 0)), code(8, "non-zero reserved bits")},
		{"flushts-reserved", Limits{}, set(8, Fmt(FLUSHTS, 0, 1, 0)), code(8, "non-zero reserved bits")},
		{"setx-index", Limits{}, set(0, Setx(2, 1)), code(0, "invalid integer ref 2")},
		{"setx-r0", Limits{}, set(0, Setx(1, 0)), code(0, "cannot write to %r0")},
		{"sets-offset", Limits{}, set(1, Sets(17, 2)), code(1, "invalid string ref 17")},
		{"sets-reg", Limits{}, set(1, Sets(0, 8)), code(1, "invalid register 8")},
		{"ldga-ri", Limits{}, set(8, Lda(LDGA, 0, 9, 5)), code(8, "invalid register 9")},
		{"ldta-r0", Limits{}, set(8, Lda(LDTA, 0, 1, 0)), code(8, "cannot write to %r0")},
		{"ldgs-var", Limits{}, set(2, Ldv(LDGS, 0xff, 3)), code(2, "invalid variable 255")},
		{"ldtaa-r0", Limits{}, set(2, Ldv(LDTAA, 0x100, 0)), code(2, "cannot write to %r0")},
		{"stgs-var", Limits{}, set(5, Stv(STGS, 0x4ff, 5)), code(5, "invalid variable 1279")},
		{"stls-reg", Limits{}, set(5, Stv(STLS, 0x500, 11)), code(5, "invalid register 11")},
		{"call-subr", Limits{}, set(8, Call(SubrMax+1, 5)), code(8, "invalid subr 55")},
		{"call-subr-dpath", Limits{}, set(8, Call(SubrDPathDentry+1, 5)), code(8, "invalid subr 32770")},
		{"call-r0", Limits{}, set(8, Call(SubrRand, 0)), code(8, "cannot write to %r0")},
		{"call-getf", Limits{}, set(8, Call(SubrGetf, 5)), code(8, "getf() not supported")},
		{"pushtr-type", Limits{}, set(8, Pushtr(2, 0, 1)), code(8, "invalid ref type 2")},
		{"pushtv-type", Limits{}, set(8, Pushtv(TypeString, 1)), code(8, "invalid val type 1")},
		{"pushtv-r2", Limits{}, set(8, Pusht(PUSHTV, 0, 8, 1)), code(8, "invalid register 8")},
		{"pushtr-rs", Limits{}, set(8, Pushtr(0, 1, 8)), code(8, "invalid register 8")},
		{"opcode-0", Limits{}, set(8, 0), code(8, "invalid opcode 0")},
		{"opcode-80", Limits{}, set(8, Instr(80)<<24), code(8, "invalid opcode 80")},
		{"opcode-xlate", Limits{}, set(8, Xlate(XLATE, 0, 5)), code(8, "invalid opcode 78")},
		{"opcode-xlarg", Limits{}, set(8, Xlate(XLARG, 0, 5)), code(8, "invalid opcode 79")},
		{"first-fault-wins", Limits{}, func(o *Object) { o.Code[1] = Sets(99, 2); o.Code[0] = Setx(0, 0) },
			code(0, "cannot write to %r0")},
		{"no-ret", Limits{}, set(9, Mov(5, 5)), code(9, "expected 'ret' as last DIF instruction")},
		{"ret-size", Limits{}, func(o *Object) { o.Ret.Size = 3 }, code(9, "bad return size")},
		{"var-scope", Limits{}, func(o *Object) { o.Vars[1].Scope = 3 },
			refusal{PartVar, 1, "unrecognized variable scope 3", false}},
		{"var-kind", Limits{}, func(o *Object) { o.Vars[0].Kind = 2 },
			refusal{PartVar, 0, "unrecognized variable type 2", false}},
		{"var-id", Limits{}, func(o *Object) { o.Vars[1].ID = 0x10000 },
			refusal{PartVar, 1, "65536 exceeds variable id limit", false}},
		{"var-zero", Limits{}, func(o *Object) { o.Vars[0].Type = Type{Kind: TypeCTF, CtfKind: CTFStruct, Flags: TFByRef} },
			refusal{PartVar, 0, "zero-sized variable", false}},
		{"var-static-size", Limits{}, func(o *Object) {
			o.Vars = append(o.Vars, Var{Name: 15, ID: VarOtherUBase + 1, Kind: KindScalar, Scope: ScopeGlobal,
				Type: Type{Kind: TypeCTF, CtfKind: CTFStruct, Flags: TFByRef, Size: 16*1024 + 1}})
		}, refusal{PartVar, 2, "oversized by-ref static", false}},
		{"var-above-max", Limits{}, set(3, Ldv(LDTS, VarOtherUBase+1, 4)), code(3, "invalid variable 1281")},
		{"var-no-scope-entry", Limits{}, set(5, Stv(STLS, VarOtherUBase, 5)), code(5, "invalid variable 1280")},
		{"helper-var", Limits{Helper: true}, func(o *Object) {}, code(2, "illegal variable 257")},
		{"helper-load", Limits{Helper: true}, set(2, Ldv(LDGS, VarPID, 3)), code(3, "illegal dynamic variable load")},
		{"helper-store", Limits{Helper: true}, func(o *Object) { o.Code[2] = Ldv(LDGS, VarArg0, 3); o.Code[3] = Setx(0, 4) },
			code(5, "illegal dynamic variable store")},
		{"helper-subr", Limits{Helper: true}, func(o *Object) {
			o.Code = []Instr{Call(SubrRand, 1), Ret(1)}
			o.Vars = nil
		}, code(0, "invalid subr 0")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base()
			c.edit(o)
			checkRefusal(t, Validate(o, c.lim), c.want)
			kernelOnly := c.lim
			kernelOnly.KernelOnly = true
			checkRefusal(t, Validate(o, kernelOnly), c.want)
		})
	}
}

// TestValidateStrict: what only kdtrace refuses, and only without
// KernelOnly.
func TestValidateStrict(t *testing.T) {
	strict := func(part Part, index int, reason string) refusal { return refusal{part, index, reason, true} }
	cases := []struct {
		name string
		edit func(o *Object)
		want refusal
	}{
		{"var-name", func(o *Object) { o.Vars[1].Name = 99 },
			strict(PartVar, 1, "name offset 99 is outside the string table (17 bytes)")},
		{"var-type-kind", func(o *Object) { o.Vars[0].Type.Kind = 5 }, strict(PartVar, 0, "unknown type kind 5")},
		{"var-type-flags", func(o *Object) { o.Vars[0].Type.Flags = 4 }, strict(PartVar, 0, "unknown type flags 0x4")},
		{"var-flags", func(o *Object) { o.Vars[0].Flags = 0x13 }, strict(PartVar, 0, "unknown variable flags 0x10")},
		{"var-twice", func(o *Object) { o.Vars = append(o.Vars, o.Vars[1]) },
			strict(PartVar, 2, "global variable 257 has a second entry")},
		{"ret-kind", func(o *Object) { o.Ret.Kind = 2 }, strict(PartObject, -1, "return type: unknown type kind 2")},
		{"var-missing", func(o *Object) { o.Vars = o.Vars[:1] },
			strict(PartCode, 2, "global variable 257 is not in the variable table")},
		{"var-wrong-kind", func(o *Object) { o.Code[3] = Ldv(LDTAA, VarOtherUBase, 4) },
			strict(PartCode, 3, "ldtaa accesses an array, but the variable table makes variable 1280 a scalar")},
		{"var-builtin-tls", func(o *Object) { o.Code[3] = Ldv(LDTS, VarPID, 4) },
			strict(PartCode, 3, "thread-local variable 278 has a built-in id")},
		{"ldta", func(o *Object) { o.Code[8] = Lda(LDTA, VarArgs, 1, 5) },
			strict(PartCode, 8, "ldta: D has no thread-local arrays and dtrace's compiler never emits it")},
		{"array-missing", func(o *Object) { o.Code[8] = Lda(LDGA, VarArgs, 1, 5) },
			strict(PartCode, 8, "global variable 0 is not in the variable table")},
		{"reg-never-written", func(o *Object) { o.Code[4] = ALU(ADD, 1, 6, 5) },
			strict(PartCode, 4, "reads %r6, which is not written on every path to it")},
		{"reg-one-path", func(o *Object) { o.Code[8] = Mov(1, 6); o.Code[9] = Ret(6) },
			strict(PartCode, 9, "reads %r6, which is not written on every path to it")},
		{"copys-reads-rd", func(o *Object) { o.Code[8] = Copys(1, 2, 6) },
			strict(PartCode, 8, "reads %r6, which is not written on every path to it")},
		{"store-reads-address", func(o *Object) { o.Code[8] = Store(STX, 1, 7) },
			strict(PartCode, 8, "reads %r7, which is not written on every path to it")},
		{"tuple-overflow", func(o *Object) {
			var c []Instr
			for range 9 {
				c = append(c, Pushtv(TypeCTF, 0))
			}
			o.Code = append(c, Ret(0))
		}, strict(PartCode, 8, "pushes a tuple entry beyond the 8 tuple registers")},
		{"tuple-overflow-one-path", func(o *Object) {
			c := []Instr{Setx(0, 1), Tst(1), Branch(BE, 4), Pushtr(TypeString, 0, 1)}
			for range 8 {
				c = append(c, Pushtv(TypeCTF, 1))
			}
			o.Code = append(c, Ret(1))
		}, strict(PartCode, 11, "pushes a tuple entry beyond the 8 tuple registers")},
		{"krelo-type", func(o *Object) { o.KRelo = []Relo{{Type: RelocDOFRel}} },
			strict(PartKRelo, 0, "invalid relocation type")},
		{"krelo-offset", func(o *Object) { o.KRelo = []Relo{{Type: RelocSetx, Offset: 16}} },
			strict(PartKRelo, 0, "bad relocation offset")},
		{"krelo-align", func(o *Object) { o.KRelo = []Relo{{Type: RelocSetx, Offset: 2}} },
			strict(PartKRelo, 0, "misaligned setx relo")},
		{"urelo-name", func(o *Object) { o.URelo = []Relo{{Type: RelocSetx, Name: 17}} },
			strict(PartURelo, 0, "name offset 17 is outside the string table (17 bytes)")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base()
			c.edit(o)
			checkRefusal(t, Validate(o, Limits{}), c.want)
			if err := Validate(o, Limits{KernelOnly: true}); err != nil {
				t.Errorf("kernel refuses it too: %v", err)
			}
		})
	}
}

// TestValidateAccepts: what both accept.
func TestValidateAccepts(t *testing.T) {
	cases := map[string]func(o *Object){
		"tuple-full": func(o *Object) {
			var c []Instr
			for range 8 {
				c = append(c, Pushtv(TypeCTF, 0))
			}
			c = append(c, Popts(), Pushtr(TypeString, 0, 0), Flushts())
			for range 8 {
				c = append(c, Pushtv(TypeCTF, 0))
			}
			o.Code = append(c, Call(SubrRand, 1), Ret(1))
		},
		"dead-code-reads": func(o *Object) {
			o.Code = []Instr{Branch(BA, 2), ALU(ADD, 6, 7, 1), Ret(0)}
		},
		"tls-by-ref-large": func(o *Object) {
			o.Vars[0].Type = Type{Kind: TypeCTF, CtfKind: CTFStruct, Flags: TFByRef, Size: 1 << 20}
		},
		"string-size-0": func(o *Object) {
			o.Vars[0].Type = StringType(0)
		},
		"urelo-none": func(o *Object) { o.URelo = []Relo{{Type: RelocNone, Offset: 1000}} },
		"urelo-ok":   func(o *Object) { o.URelo = []Relo{{Type: RelocSetx, Offset: 8, Name: 1}} },
		"ret-by-ref": func(o *Object) { o.Ret = StringType(256) },
		"ret-size-0": func(o *Object) { o.Ret = Type{} },
		"empty-strtab": func(o *Object) {
			o.Strs = nil
			o.Code = []Instr{Setx(0, 1), Ret(1)}
			o.Vars = nil
		},
		"helper-ok": func(o *Object) {
			o.Code = []Instr{Ldv(LDGS, VarPID, 1), Lda(LDGA, VarArgs, 1, 2), Call(SubrCopyinstr, 3), Ret(3)}
			o.Vars = []Var{
				{Name: 1, ID: VarArgs, Kind: KindArray, Scope: ScopeGlobal, Flags: FlagRef, Type: IntType(8)},
				{Name: 1, ID: VarPID, Kind: KindScalar, Scope: ScopeGlobal, Flags: FlagRef, Type: IntType(4)},
			}
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			o := base()
			edit(o)
			for _, lim := range []Limits{{}, {KernelOnly: true}} {
				lim.Helper = name == "helper-ok"
				if err := Validate(o, lim); err != nil {
					t.Errorf("%+v: %v", lim, err)
				}
			}
		})
	}
}

// TestValidatorState: user variables keep their definitions across the
// DIFOs of one consumer state.
func TestValidatorState(t *testing.T) {
	withVar := func(v Var) *Object {
		o := base()
		o.Vars[0] = v
		return o
	}
	tls := base().Vars[0]
	glb := Var{Name: 15, ID: VarOtherUBase + 1, Kind: KindScalar, Scope: ScopeGlobal, Type: IntType(8)}
	withGlobal := func(v Var) *Object {
		o := base()
		o.Vars = append(o.Vars, v)
		return o
	}

	v := NewValidator(Limits{})
	if err := v.Validate(withGlobal(glb)); err != nil {
		t.Fatal(err)
	}
	g2 := glb
	g2.Kind = KindArray
	checkRefusal(t, v.Validate(withGlobal(g2)), refusal{PartVar, 2, "1281 changed variable kind", false})
	g2 = glb
	g2.Type.Flags = TFByRef
	checkRefusal(t, v.Validate(withGlobal(g2)), refusal{PartVar, 2, "1281 changed variable type flags", false})
	g2 = glb
	g2.Type.Size = 4
	checkRefusal(t, v.Validate(withGlobal(g2)), refusal{PartVar, 2, "1281 changed variable type size", false})
	g2.Type.Size = 0
	if err := v.Validate(withGlobal(g2)); err != nil {
		t.Errorf("size 0 is not a change: %v", err)
	}

	// A thread-local's latest definition stands; a global's first does.
	t2 := tls
	t2.Type.Size = 4
	if err := v.Validate(withVar(tls)); err != nil {
		t.Fatal(err)
	}
	checkRefusal(t, v.Validate(withVar(t2)), refusal{PartVar, 0, "1280 changed variable type size", false})

	// Strings of size 0 take the default size before the comparison.
	s := Var{Name: 15, ID: VarOtherUBase + 2, Kind: KindScalar, Scope: ScopeGlobal, Type: StringType(0)}
	if err := v.Validate(withGlobal(s)); err != nil {
		t.Fatal(err)
	}
	s.Type.Size = 256
	if err := v.Validate(withGlobal(s)); err != nil {
		t.Errorf("string of size 0 then 256: %v", err)
	}
	s.Type.Size = 512
	checkRefusal(t, v.Validate(withGlobal(s)), refusal{PartVar, 2, "1282 changed variable type size", false})

	// A refused DIFO defines nothing.
	v = NewValidator(Limits{})
	bad := withGlobal(glb)
	bad.Code[0] = Setx(9, 1)
	if v.Validate(bad) == nil {
		t.Fatal("bad DIFO accepted")
	}
	g2 = glb
	g2.Kind = KindArray
	if err := v.Validate(withGlobal(g2)); err != nil {
		t.Errorf("refused DIFO left a definition: %v", err)
	}
}

func TestErrorText(t *testing.T) {
	o := base()
	o.Code[4] = ALU(ADD, 1, 3, 9)
	err := Validate(o, Limits{})
	if got, want := err.Error(), "dif: instruction 4 (add  %r1, %r3, %r9): invalid register 9"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{Part: PartVar, Index: 2, Reason: "zero-sized variable"}, "dif: variable 2: zero-sized variable"},
		{Error{Part: PartObject, Index: -1, Reason: "missing DIF text"}, "dif: object: missing DIF text"},
		{Error{Part: PartURelo, Index: 0, Reason: "bad relocation offset"}, "dif: user relocation 0: bad relocation offset"},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
