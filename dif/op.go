package dif

import "strconv"

// Op is a DIF opcode: the top byte of an instruction word.
type Op uint8

// The opcodes of DIF version 2, numbered as in dtrace.h (DIF_OP_*).
// Opcode 0 and opcodes above XLARG are not instructions.
const (
	OR      Op = 1  // or r1, r2, rd
	XOR     Op = 2  // xor r1, r2, rd
	AND     Op = 3  // and r1, r2, rd
	SLL     Op = 4  // sll r1, r2, rd
	SRL     Op = 5  // srl r1, r2, rd
	SUB     Op = 6  // sub r1, r2, rd
	ADD     Op = 7  // add r1, r2, rd
	MUL     Op = 8  // mul r1, r2, rd
	SDIV    Op = 9  // sdiv r1, r2, rd
	UDIV    Op = 10 // udiv r1, r2, rd
	SREM    Op = 11 // srem r1, r2, rd
	UREM    Op = 12 // urem r1, r2, rd
	NOT     Op = 13 // not r1, rd
	MOV     Op = 14 // mov r1, rd
	CMP     Op = 15 // cmp r1, r2
	TST     Op = 16 // tst r1
	BA      Op = 17 // ba label
	BE      Op = 18 // be label
	BNE     Op = 19 // bne label
	BG      Op = 20 // bg label
	BGU     Op = 21 // bgu label
	BGE     Op = 22 // bge label
	BGEU    Op = 23 // bgeu label
	BL      Op = 24 // bl label
	BLU     Op = 25 // blu label
	BLE     Op = 26 // ble label
	BLEU    Op = 27 // bleu label
	LDSB    Op = 28 // ldsb [r1], rd
	LDSH    Op = 29 // ldsh [r1], rd
	LDSW    Op = 30 // ldsw [r1], rd
	LDUB    Op = 31 // ldub [r1], rd
	LDUH    Op = 32 // lduh [r1], rd
	LDUW    Op = 33 // lduw [r1], rd
	LDX     Op = 34 // ldx [r1], rd
	RET     Op = 35 // ret rd
	NOP     Op = 36 // nop
	SETX    Op = 37 // setx intindex, rd
	SETS    Op = 38 // sets stroffset, rd
	SCMP    Op = 39 // scmp r1, r2
	LDGA    Op = 40 // ldga var, ri, rd
	LDGS    Op = 41 // ldgs var, rd
	STGS    Op = 42 // stgs var, rs
	LDTA    Op = 43 // ldta var, ri, rd
	LDTS    Op = 44 // ldts var, rd
	STTS    Op = 45 // stts var, rs
	SRA     Op = 46 // sra r1, r2, rd
	CALL    Op = 47 // call subr, rd
	PUSHTR  Op = 48 // pushtr type, rsize, rs
	PUSHTV  Op = 49 // pushtv type, rs
	POPTS   Op = 50 // popts
	FLUSHTS Op = 51 // flushts
	LDGAA   Op = 52 // ldgaa var, rd
	LDTAA   Op = 53 // ldtaa var, rd
	STGAA   Op = 54 // stgaa var, rs
	STTAA   Op = 55 // sttaa var, rs
	LDLS    Op = 56 // ldls var, rd
	STLS    Op = 57 // stls var, rs
	ALLOCS  Op = 58 // allocs r1, rd
	COPYS   Op = 59 // copys r1, r2, rd
	STB     Op = 60 // stb r1, [rd]
	STH     Op = 61 // sth r1, [rd]
	STW     Op = 62 // stw r1, [rd]
	STX     Op = 63 // stx r1, [rd]
	ULDSB   Op = 64 // uldsb [r1], rd
	ULDSH   Op = 65 // uldsh [r1], rd
	ULDSW   Op = 66 // uldsw [r1], rd
	ULDUB   Op = 67 // uldub [r1], rd
	ULDUH   Op = 68 // ulduh [r1], rd
	ULDUW   Op = 69 // ulduw [r1], rd
	ULDX    Op = 70 // uldx [r1], rd
	RLDSB   Op = 71 // rldsb [r1], rd
	RLDSH   Op = 72 // rldsh [r1], rd
	RLDSW   Op = 73 // rldsw [r1], rd
	RLDUB   Op = 74 // rldub [r1], rd
	RLDUH   Op = 75 // rlduh [r1], rd
	RLDUW   Op = 76 // rlduw [r1], rd
	RLDX    Op = 77 // rldx [r1], rd
	XLATE   Op = 78 // xlate xlrindex, rd
	XLARG   Op = 79 // xlarg xlrindex, rd

	// MaxOp is the highest opcode.
	MaxOp = XLARG
)

// Form is the operand layout of an instruction, which decides how its
// fields are read, checked and printed.
type Form uint8

// The instruction forms. The comment shows the fields used, high byte
// first after the opcode.
const (
	FormInvalid Form = iota // not an opcode
	FormALU                 // r1, r2, rd: arithmetic, logic, shifts, copys
	FormR1RD                // r1, -, rd: not, mov, allocs
	FormCmp                 // r1, r2, -: cmp, scmp
	FormTst                 // r1, -, -: tst
	FormBranch              // 24-bit label: ba … bleu
	FormLoad                // r1, -, rd: ld*, uld*, rld*
	FormStore               // r1, -, rd: st* (rd holds the address)
	FormRet                 // -, -, rd: ret
	FormNone                // -, -, -: nop, popts, flushts
	FormSetx                // 16-bit integer-table index, rd
	FormSets                // 16-bit string-table offset, rd
	FormLda                 // 8-bit array variable, ri, rd: ldga, ldta
	FormLdv                 // 16-bit variable, rd: ldgs, ldts, ldls, ldgaa, ldtaa
	FormStv                 // 16-bit variable, rs: stgs, stts, stls, stgaa, sttaa
	FormCall                // 16-bit subroutine, rd
	FormPush                // 8-bit type, r2, rs: pushtr, pushtv
	FormXlate               // 16-bit translator reference, rd: xlate, xlarg
)

type opInfo struct {
	name string
	form Form
}

var ops = [MaxOp + 1]opInfo{
	OR: {"or", FormALU}, XOR: {"xor", FormALU}, AND: {"and", FormALU},
	SLL: {"sll", FormALU}, SRL: {"srl", FormALU}, SUB: {"sub", FormALU},
	ADD: {"add", FormALU}, MUL: {"mul", FormALU}, SDIV: {"sdiv", FormALU},
	UDIV: {"udiv", FormALU}, SREM: {"srem", FormALU}, UREM: {"urem", FormALU},
	NOT: {"not", FormR1RD}, MOV: {"mov", FormR1RD},
	CMP: {"cmp", FormCmp}, TST: {"tst", FormTst},
	BA: {"ba", FormBranch}, BE: {"be", FormBranch}, BNE: {"bne", FormBranch},
	BG: {"bg", FormBranch}, BGU: {"bgu", FormBranch}, BGE: {"bge", FormBranch},
	BGEU: {"bgeu", FormBranch}, BL: {"bl", FormBranch}, BLU: {"blu", FormBranch},
	BLE: {"ble", FormBranch}, BLEU: {"bleu", FormBranch},
	LDSB: {"ldsb", FormLoad}, LDSH: {"ldsh", FormLoad}, LDSW: {"ldsw", FormLoad},
	LDUB: {"ldub", FormLoad}, LDUH: {"lduh", FormLoad}, LDUW: {"lduw", FormLoad},
	LDX: {"ldx", FormLoad},
	RET: {"ret", FormRet}, NOP: {"nop", FormNone},
	SETX: {"setx", FormSetx}, SETS: {"sets", FormSets}, SCMP: {"scmp", FormCmp},
	LDGA: {"ldga", FormLda}, LDGS: {"ldgs", FormLdv}, STGS: {"stgs", FormStv},
	LDTA: {"ldta", FormLda}, LDTS: {"ldts", FormLdv}, STTS: {"stts", FormStv},
	SRA:  {"sra", FormALU},
	CALL: {"call", FormCall}, PUSHTR: {"pushtr", FormPush}, PUSHTV: {"pushtv", FormPush},
	POPTS: {"popts", FormNone}, FLUSHTS: {"flushts", FormNone},
	LDGAA: {"ldgaa", FormLdv}, LDTAA: {"ldtaa", FormLdv},
	STGAA: {"stgaa", FormStv}, STTAA: {"sttaa", FormStv},
	LDLS: {"ldls", FormLdv}, STLS: {"stls", FormStv},
	ALLOCS: {"allocs", FormR1RD}, COPYS: {"copys", FormALU},
	STB: {"stb", FormStore}, STH: {"sth", FormStore}, STW: {"stw", FormStore},
	STX:   {"stx", FormStore},
	ULDSB: {"uldsb", FormLoad}, ULDSH: {"uldsh", FormLoad}, ULDSW: {"uldsw", FormLoad},
	ULDUB: {"uldub", FormLoad}, ULDUH: {"ulduh", FormLoad}, ULDUW: {"ulduw", FormLoad},
	ULDX:  {"uldx", FormLoad},
	RLDSB: {"rldsb", FormLoad}, RLDSH: {"rldsh", FormLoad}, RLDSW: {"rldsw", FormLoad},
	RLDUB: {"rldub", FormLoad}, RLDUH: {"rlduh", FormLoad}, RLDUW: {"rlduw", FormLoad},
	RLDX:  {"rldx", FormLoad},
	XLATE: {"xlate", FormXlate}, XLARG: {"xlarg", FormXlate},
}

// Valid reports whether op is one of the opcodes OR … XLARG.
func (op Op) Valid() bool { return op >= OR && op <= MaxOp }

// Form returns the operand layout of op, FormInvalid for a non-opcode.
func (op Op) Form() Form {
	if !op.Valid() {
		return FormInvalid
	}
	return ops[op].form
}

// String returns the mnemonic dtrace's disassembler prints ("add",
// "ldgs", …), or "Op(N)" for a value that is not an opcode.
func (op Op) String() string {
	if !op.Valid() {
		return "Op(" + strconv.Itoa(int(op)) + ")"
	}
	return ops[op].name
}

// LookupOp returns the opcode whose mnemonic is name.
func LookupOp(name string) (Op, bool) {
	for op := OR; op <= MaxOp; op++ {
		if ops[op].name == name {
			return op, true
		}
	}
	return 0, false
}

// IsBranch reports whether op is one of the branches BA … BLEU.
func (op Op) IsBranch() bool { return op >= BA && op <= BLEU }

// Scope returns the variable scope an access instruction works on
// (ldgs/stgs/ldga/ldgaa/stgaa: global; ldts/stts/ldta/ldtaa/sttaa:
// thread; ldls/stls: local) and false for other opcodes.
func (op Op) Scope() (uint8, bool) {
	switch op {
	case LDGA, LDGS, STGS, LDGAA, STGAA:
		return ScopeGlobal, true
	case LDTA, LDTS, STTS, LDTAA, STTAA:
		return ScopeThread, true
	case LDLS, STLS:
		return ScopeLocal, true
	}
	return 0, false
}

// VarKind returns the kind of variable an access instruction names:
// KindArray for ldga/ldta (the built-in arrays) and the associative-array
// ops, KindScalar for the scalar loads and stores; false otherwise.
func (op Op) VarKind() (uint8, bool) {
	switch op {
	case LDGA, LDTA, LDGAA, LDTAA, STGAA, STTAA:
		return KindArray, true
	case LDGS, LDTS, LDLS, STGS, STTS, STLS:
		return KindScalar, true
	}
	return 0, false
}

// IsVarStore reports whether op writes a variable (stgs, stts, stls,
// stgaa, sttaa).
func (op Op) IsVarStore() bool { return op.Form() == FormStv }

// IsVarLoad reports whether op reads a variable (ldga, ldta, ldgs, ldts,
// ldls, ldgaa, ldtaa).
func (op Op) IsVarLoad() bool { return op.Form() == FormLdv || op.Form() == FormLda }
