package dif

import (
	"math/rand/v2"
	"testing"
)

// The opcode numbers and mnemonics of dtrace.h and dt_dis.c.
var opcodeTable = []struct {
	op   Op
	num  uint8
	name string
	form Form
}{
	{OR, 1, "or", FormALU}, {XOR, 2, "xor", FormALU}, {AND, 3, "and", FormALU},
	{SLL, 4, "sll", FormALU}, {SRL, 5, "srl", FormALU}, {SUB, 6, "sub", FormALU},
	{ADD, 7, "add", FormALU}, {MUL, 8, "mul", FormALU}, {SDIV, 9, "sdiv", FormALU},
	{UDIV, 10, "udiv", FormALU}, {SREM, 11, "srem", FormALU}, {UREM, 12, "urem", FormALU},
	{NOT, 13, "not", FormR1RD}, {MOV, 14, "mov", FormR1RD}, {CMP, 15, "cmp", FormCmp},
	{TST, 16, "tst", FormTst}, {BA, 17, "ba", FormBranch}, {BE, 18, "be", FormBranch},
	{BNE, 19, "bne", FormBranch}, {BG, 20, "bg", FormBranch}, {BGU, 21, "bgu", FormBranch},
	{BGE, 22, "bge", FormBranch}, {BGEU, 23, "bgeu", FormBranch}, {BL, 24, "bl", FormBranch},
	{BLU, 25, "blu", FormBranch}, {BLE, 26, "ble", FormBranch}, {BLEU, 27, "bleu", FormBranch},
	{LDSB, 28, "ldsb", FormLoad}, {LDSH, 29, "ldsh", FormLoad}, {LDSW, 30, "ldsw", FormLoad},
	{LDUB, 31, "ldub", FormLoad}, {LDUH, 32, "lduh", FormLoad}, {LDUW, 33, "lduw", FormLoad},
	{LDX, 34, "ldx", FormLoad}, {RET, 35, "ret", FormRet}, {NOP, 36, "nop", FormNone},
	{SETX, 37, "setx", FormSetx}, {SETS, 38, "sets", FormSets}, {SCMP, 39, "scmp", FormCmp},
	{LDGA, 40, "ldga", FormLda}, {LDGS, 41, "ldgs", FormLdv}, {STGS, 42, "stgs", FormStv},
	{LDTA, 43, "ldta", FormLda}, {LDTS, 44, "ldts", FormLdv}, {STTS, 45, "stts", FormStv},
	{SRA, 46, "sra", FormALU}, {CALL, 47, "call", FormCall}, {PUSHTR, 48, "pushtr", FormPush},
	{PUSHTV, 49, "pushtv", FormPush}, {POPTS, 50, "popts", FormNone},
	{FLUSHTS, 51, "flushts", FormNone}, {LDGAA, 52, "ldgaa", FormLdv},
	{LDTAA, 53, "ldtaa", FormLdv}, {STGAA, 54, "stgaa", FormStv}, {STTAA, 55, "sttaa", FormStv},
	{LDLS, 56, "ldls", FormLdv}, {STLS, 57, "stls", FormStv}, {ALLOCS, 58, "allocs", FormR1RD},
	{COPYS, 59, "copys", FormALU}, {STB, 60, "stb", FormStore}, {STH, 61, "sth", FormStore},
	{STW, 62, "stw", FormStore}, {STX, 63, "stx", FormStore}, {ULDSB, 64, "uldsb", FormLoad},
	{ULDSH, 65, "uldsh", FormLoad}, {ULDSW, 66, "uldsw", FormLoad}, {ULDUB, 67, "uldub", FormLoad},
	{ULDUH, 68, "ulduh", FormLoad}, {ULDUW, 69, "ulduw", FormLoad}, {ULDX, 70, "uldx", FormLoad},
	{RLDSB, 71, "rldsb", FormLoad}, {RLDSH, 72, "rldsh", FormLoad}, {RLDSW, 73, "rldsw", FormLoad},
	{RLDUB, 74, "rldub", FormLoad}, {RLDUH, 75, "rlduh", FormLoad}, {RLDUW, 76, "rlduw", FormLoad},
	{RLDX, 77, "rldx", FormLoad}, {XLATE, 78, "xlate", FormXlate}, {XLARG, 79, "xlarg", FormXlate},
}

func TestOpcodes(t *testing.T) {
	if len(opcodeTable) != int(MaxOp) {
		t.Fatalf("table has %d opcodes, want %d", len(opcodeTable), MaxOp)
	}
	for _, c := range opcodeTable {
		if uint8(c.op) != c.num {
			t.Errorf("%s = %d, want %d", c.name, c.op, c.num)
		}
		if c.op.String() != c.name {
			t.Errorf("Op(%d).String() = %q, want %q", c.num, c.op, c.name)
		}
		if c.op.Form() != c.form {
			t.Errorf("%s form %d, want %d", c.name, c.op.Form(), c.form)
		}
		if op, ok := LookupOp(c.name); !ok || op != c.op {
			t.Errorf("LookupOp(%q) = %v, %v", c.name, op, ok)
		}
		if !c.op.Valid() {
			t.Errorf("%s not valid", c.name)
		}
	}
	for _, op := range []Op{0, 80, 255} {
		if op.Valid() || op.Form() != FormInvalid {
			t.Errorf("Op(%d) valid", op)
		}
	}
	if Op(80).String() != "Op(80)" {
		t.Errorf("Op(80).String() = %q", Op(80))
	}
}

// TestEncode checks each constructor against the word dtrace's macro
// gives and reads every field back.
func TestEncode(t *testing.T) {
	cases := []struct {
		name string
		in   Instr
		word uint32
		text string
	}{
		{"or", ALU(OR, 1, 2, 3), 0x01010203, "or   %r1, %r2, %r3"},
		{"sra", ALU(SRA, 7, 6, 5), 0x2e070605, "sra  %r7, %r6, %r5"},
		{"not", Not(4, 5), 0x0d040005, "not  %r4, %r5"},
		{"mov", Mov(0, 2), 0x0e000002, "mov  %r0, %r2"},
		{"cmp", Cmp(CMP, 1, 2), 0x0f010200, "cmp  %r1, %r2"},
		{"scmp", Cmp(SCMP, 3, 4), 0x27030400, "scmp %r3, %r4"},
		{"tst", Tst(6), 0x10060000, "tst  %r6"},
		{"ba", Branch(BA, 9), 0x11000009, "ba   9"},
		{"bleu", Branch(BLEU, 0xabcdef), 0x1babcdef, "bleu 11259375"},
		{"branch-mask", Branch(BE, 0x1000005), 0x12000005, "be   5"},
		{"ldsb", Load(LDSB, 1, 2), 0x1c010002, "ldsb [%r1], %r2"},
		{"uldx", Load(ULDX, 3, 4), 0x46030004, "uldx [%r3], %r4"},
		{"rldub", Load(RLDUB, 5, 6), 0x4a050006, "rldub [%r5], %r6"},
		{"stx", Store(STX, 1, 2), 0x3f010002, "stx  %r1, [%r2]"},
		{"setx", Setx(0, 1), 0x25000001, "setx DT_INTEGER[0], %r1"},
		{"setx-big", Setx(0xffff, 7), 0x25ffff07, "setx DT_INTEGER[65535], %r7"},
		{"sets", Sets(0x1234, 2), 0x26123402, "sets DT_STRING[4660], %r2"},
		{"ret", Ret(1), 0x23000001, "ret  %r1"},
		{"nop", Nop(), 0x24000000, "nop"},
		{"ldga", Lda(LDGA, 0, 1, 2), 0x28000102, "ldga DT_VAR(0), %r1, %r2"},
		{"ldta", Lda(LDTA, 0x80, 3, 4), 0x2b800304, "ldta DT_VAR(128), %r3, %r4"},
		{"ldgs", Ldv(LDGS, 0x101, 1), 0x29010101, "ldgs DT_VAR(257), %r1"},
		{"ldts", Ldv(LDTS, 0x500, 2), 0x2c050002, "ldts DT_VAR(1280), %r2"},
		{"ldls", Ldv(LDLS, 0x501, 3), 0x38050103, "ldls DT_VAR(1281), %r3"},
		{"ldgaa", Ldv(LDGAA, 0x502, 4), 0x34050204, "ldgaa DT_VAR(1282), %r4"},
		{"ldtaa", Ldv(LDTAA, 0x503, 5), 0x35050305, "ldtaa DT_VAR(1283), %r5"},
		{"stgs", Stv(STGS, 0x500, 1), 0x2a050001, "stgs %r1, DT_VAR(1280)"},
		{"stts", Stv(STTS, 0x500, 2), 0x2d050002, "stts %r2, DT_VAR(1280)"},
		{"stls", Stv(STLS, 0x500, 3), 0x39050003, "stls %r3, DT_VAR(1280)"},
		{"stgaa", Stv(STGAA, 0x500, 4), 0x36050004, "stgaa %r4, DT_VAR(1280)"},
		{"sttaa", Stv(STTAA, 0x500, 5), 0x37050005, "sttaa %r5, DT_VAR(1280)"},
		{"call", Call(SubrStrjoin, 3), 0x2f001703, "call DIF_SUBR(23), %r3\t\t! strjoin"},
		{"pushtr", Pushtr(TypeString, 0, 2), 0x30010002, "pushtr DT_TYPE(1), %r0, %r2\t! DT_TYPE(1) = string"},
		{"pushtv", Pushtv(TypeCTF, 3), 0x31000003, "pushtv DT_TYPE(0), %r3\t\t! DT_TYPE(0) = D type"},
		{"pusht", Pusht(PUSHTR, 0, 4, 5), 0x30000405, "pushtr DT_TYPE(0), %r4, %r5\t! DT_TYPE(0) = D type"},
		{"popts", Popts(), 0x32000000, "popts"},
		{"flushts", Flushts(), 0x33000000, "flushts"},
		{"allocs", Allocs(1, 2), 0x3a010002, "allocs %r1, %r2"},
		{"copys", Copys(1, 2, 3), 0x3b010203, "copys %r1, %r2, %r3"},
		{"xlate", Xlate(XLATE, 2, 1), 0x4e000201, "xlate DT_XLREF[2], %r1"},
		{"xlarg", Xlate(XLARG, 0, 7), 0x4f000007, "xlarg DT_XLREF[0], %r7"},
		{"illegal0", Instr(0x00010203), 0x00010203, "(illegal opcode)"},
		{"illegal80", Instr(0x50000000), 0x50000000, "(illegal opcode)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if uint32(c.in) != c.word {
				t.Errorf("word %#08x, want %#08x", uint32(c.in), c.word)
			}
			w := c.word
			in := Instr(w)
			if in.Op() != Op(w>>24) || in.R1() != uint8(w>>16) || in.R2() != uint8(w>>8) ||
				in.RD() != uint8(w) || in.RS() != uint8(w) || in.Label() != w&0xffffff ||
				in.Index() != uint16(w>>8) || in.Var() != uint16(w>>8) ||
				in.Subr() != uint16(w>>8) || in.Type() != uint8(w>>16) {
				t.Errorf("accessors disagree with the word %#08x", w)
			}
			if got := in.String(); got != c.text {
				t.Errorf("text %q, want %q", got, c.text)
			}
		})
	}
}

// rebuild makes an instruction from its decoded fields with the
// constructor of its form, zeroing the fields the form does not use.
func rebuild(in Instr) Instr {
	op := in.Op()
	switch op.Form() {
	case FormALU:
		if op == COPYS {
			return Copys(in.R1(), in.R2(), in.RD())
		}
		return ALU(op, in.R1(), in.R2(), in.RD())
	case FormR1RD:
		switch op {
		case NOT:
			return Not(in.R1(), in.RD())
		case MOV:
			return Mov(in.R1(), in.RD())
		}
		return Allocs(in.R1(), in.RD())
	case FormCmp:
		return Cmp(op, in.R1(), in.R2())
	case FormTst:
		return Tst(in.R1())
	case FormBranch:
		return Branch(op, in.Label())
	case FormLoad:
		return Load(op, in.R1(), in.RD())
	case FormStore:
		return Store(op, in.R1(), in.RD())
	case FormRet:
		return Ret(in.RD())
	case FormNone:
		switch op {
		case NOP:
			return Nop()
		case POPTS:
			return Popts()
		}
		return Flushts()
	case FormSetx:
		return Setx(in.Index(), in.RD())
	case FormSets:
		return Sets(in.Index(), in.RD())
	case FormLda:
		return Lda(op, in.R1(), in.R2(), in.RD())
	case FormLdv:
		return Ldv(op, in.Var(), in.RD())
	case FormStv:
		return Stv(op, in.Var(), in.RS())
	case FormCall:
		return Call(in.Subr(), in.RD())
	case FormPush:
		if op == PUSHTV {
			return Pushtv(in.Type(), in.RS())
		}
		return Pushtr(in.Type(), in.R2(), in.RS())
	case FormXlate:
		return Xlate(op, in.Index(), in.RD())
	}
	return in
}

// usedMask is the bits of a word each form gives meaning to.
func usedMask(op Op) uint32 {
	switch op.Form() {
	case FormALU, FormLda, FormBranch, FormSetx, FormSets, FormLdv, FormStv, FormCall, FormXlate:
		return 0xffffffff
	case FormR1RD, FormLoad, FormStore:
		return 0xffff00ff
	case FormCmp:
		return 0xffffff00
	case FormTst:
		return 0xffff0000
	case FormRet:
		return 0xff0000ff
	case FormNone:
		return 0xff000000
	case FormPush:
		if op == PUSHTV {
			return 0xffff00ff
		}
		return 0xffffffff
	}
	return 0xffffffff
}

// TestRoundTrip decodes random words of every opcode and encodes them
// again from their fields.
func TestRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range opcodeTable {
		for range 2000 {
			w := uint32(c.op)<<24 | r.Uint32()&0xffffff
			w &= usedMask(c.op)
			in := Instr(w)
			if got := rebuild(in); got != in {
				t.Fatalf("%s: %#08x decodes and re-encodes as %#08x", c.name, w, uint32(got))
			}
			if got := in.WithIndex(in.Index()); (c.op.Form() == FormSetx || c.op.Form() == FormLdv) && got != in {
				t.Fatalf("%s: WithIndex changed %#08x to %#08x", c.name, w, uint32(got))
			}
		}
	}
}

func TestSubrName(t *testing.T) {
	for s, want := range map[uint16]string{
		SubrRand: "rand", SubrCopyoutstr: "copyoutstr", SubrDDIPathname: "ddi_pathname",
		SubrInetNtoa6: "inet_ntoa6", SubrTyperef: "typeref", SubrSxSharedHeld: "sx_shared_held",
		SubrMemstr: "memstr", SubrGetf: "getf", SubrJSON: "json", SubrStrtoll: "strtoll",
		55: "unknown", 0xffff: "unknown",
	} {
		if got := SubrName(s); got != want {
			t.Errorf("SubrName(%d) = %q, want %q", s, got, want)
		}
	}
}

func TestOpScope(t *testing.T) {
	for _, c := range []struct {
		op    Op
		scope uint8
		kind  uint8
	}{
		{LDGA, ScopeGlobal, KindArray}, {LDGS, ScopeGlobal, KindScalar}, {STGS, ScopeGlobal, KindScalar},
		{LDGAA, ScopeGlobal, KindArray}, {STGAA, ScopeGlobal, KindArray},
		{LDTA, ScopeThread, KindArray}, {LDTS, ScopeThread, KindScalar}, {STTS, ScopeThread, KindScalar},
		{LDTAA, ScopeThread, KindArray}, {STTAA, ScopeThread, KindArray},
		{LDLS, ScopeLocal, KindScalar}, {STLS, ScopeLocal, KindScalar},
	} {
		s, ok := c.op.Scope()
		k, ok2 := c.op.VarKind()
		if !ok || !ok2 || s != c.scope || k != c.kind {
			t.Errorf("%v: scope %d %v kind %d %v", c.op, s, ok, k, ok2)
		}
	}
	if _, ok := ADD.Scope(); ok {
		t.Error("add has a scope")
	}
}
