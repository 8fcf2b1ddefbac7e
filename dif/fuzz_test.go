package dif

import (
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// The fuzz input is a small object file:
//
//	flags ncode nints nstrs nvars nurelo nkrelo nxlate | ret type (8)
//	code (4·ncode) | ints (8·nints) | strs (nstrs) | vars (20·nvars)
//	urelo, krelo (24 each)
//
// flags: bit 0 KernelOnly, bit 1 Helper, bits 2–3 choose NRegs (8, 4,
// 16, 8). Missing bytes read as zero.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) next(n int) []byte {
	out := make([]byte, n)
	k := copy(out, r.b)
	r.b = r.b[k:]
	return out
}

var le = binary.LittleEndian

func decodeFuzz(data []byte) (*Object, Limits) {
	r := &fuzzReader{data}
	h := r.next(8)
	lim := Limits{KernelOnly: h[0]&1 != 0, Helper: h[0]&2 != 0}
	lim.NRegs = [4]int{8, 4, 16, 8}[h[0]>>2&3]
	o := &Object{}
	o.Ret, _ = ParseType(r.next(TypeSize), le)
	o.Code, _ = ParseCode(r.next(int(h[1])*InstrSize), le)
	o.Ints, _ = ParseInts(r.next(int(h[2])*IntSize), le)
	o.Strs = r.next(int(h[3]))
	for range int(h[4]) {
		v, _ := ParseVar(r.next(VarSize), le)
		o.Vars = append(o.Vars, v)
	}
	for range int(h[5] % 4) {
		rel, _ := ParseRelo(r.next(RelocSize), le)
		o.URelo = append(o.URelo, rel)
	}
	for range int(h[6] % 4) {
		rel, _ := ParseRelo(r.next(RelocSize), le)
		o.KRelo = append(o.KRelo, rel)
	}
	for range int(h[7] % 2) {
		o.Xlate = append(o.Xlate, XlateRef{Xlator: 1, Name: "m", Type: "int"})
	}
	return o, lim
}

func encodeFuzz(o *Object, flags byte) []byte {
	b := []byte{flags, byte(len(o.Code)), byte(len(o.Ints)), byte(len(o.Strs)), byte(len(o.Vars)),
		byte(len(o.URelo)), byte(len(o.KRelo)), byte(len(o.Xlate))}
	b = AppendType(b, le, o.Ret)
	b = AppendCode(b, le, o.Code)
	b = AppendInts(b, le, o.Ints)
	b = append(b, o.Strs...)
	for _, v := range o.Vars {
		b = AppendVar(b, le, v)
	}
	for _, r := range o.URelo {
		b = AppendRelo(b, le, r)
	}
	for _, r := range o.KRelo {
		b = AppendRelo(b, le, r)
	}
	return b
}

func FuzzValidate(f *testing.F) {
	seeds := []*Object{base()}
	for _, o := range disObjects(f) {
		if len(o.Code) < 256 && len(o.Strs) < 256 {
			seeds = append(seeds, o)
		}
	}
	for _, o := range seeds {
		for _, flags := range []byte{0, 1, 2} {
			f.Add(encodeFuzz(o, flags))
		}
	}
	bad := base()
	bad.Code[7] = Branch(BA, 2)
	f.Add(encodeFuzz(bad, 0))
	f.Add([]byte{})

	f.Fuzz(func(t *testing.T, data []byte) {
		o, lim := decodeFuzz(data)
		err := Validate(o, lim)
		if err := Disassemble(io.Discard, o, "fuzz"); err != nil {
			t.Fatal(err)
		}
		other := lim
		other.KernelOnly = !lim.KernelOnly
		err2 := Validate(o, other)
		strictErr, kernelErr := err, err2
		if lim.KernelOnly {
			strictErr, kernelErr = err2, err
		}
		if kernelErr != nil && (strictErr == nil || strictErr.Error() != kernelErr.Error()) {
			t.Fatalf("kernel checks refuse (%v) but strict ones say %v", kernelErr, strictErr)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Reason == "" || err.Error() == "" {
				t.Fatalf("refusal without a reason: %#v", err)
			}
			if e.Strict == lim.KernelOnly && e.Strict {
				t.Fatalf("strict refusal under KernelOnly: %v", e)
			}
			switch e.Part {
			case PartCode:
				if e.Index < 0 || e.Index >= len(o.Code) || o.Code[e.Index] != e.Instr {
					t.Fatalf("refusal names instruction %d of %d: %v", e.Index, len(o.Code), e)
				}
			case PartVar:
				if e.Index < 0 || e.Index >= len(o.Vars) {
					t.Fatalf("refusal names variable %d of %d", e.Index, len(o.Vars))
				}
			case PartURelo:
				if e.Index < 0 || e.Index >= len(o.URelo) {
					t.Fatalf("refusal names user relocation %d of %d", e.Index, len(o.URelo))
				}
			case PartKRelo:
				if e.Index < 0 || e.Index >= len(o.KRelo) {
					t.Fatalf("refusal names kernel relocation %d of %d", e.Index, len(o.KRelo))
				}
			case PartObject, PartStrings:
				if e.Index != -1 {
					t.Fatalf("object refusal with index %d", e.Index)
				}
			default:
				t.Fatalf("unknown part %q", e.Part)
			}
			return
		}
		// Accepted: what the kernel relies on holds.
		n := len(o.Code)
		if n == 0 || o.Code[n-1].Op() != RET {
			t.Fatal("accepted code that does not end in ret")
		}
		for pc, in := range o.Code {
			op := in.Op()
			if !op.Valid() || op == XLATE || op == XLARG {
				t.Fatalf("accepted opcode %d at %d", op, pc)
			}
			if op.IsBranch() && (int(in.Label()) <= pc || int(in.Label()) >= n) {
				t.Fatalf("accepted branch %v at %d", in, pc)
			}
			if op == SETX && int(in.Index()) >= len(o.Ints) || op == SETS && int(in.Index()) >= len(o.Strs) {
				t.Fatalf("accepted table reference %v at %d", in, pc)
			}
			if r, ok := written(in); ok && (r == 0 || int(r) >= lim.NRegs) {
				t.Fatalf("accepted write to %%r%d at %d", r, pc)
			}
		}
		if len(o.Strs) > 0 && o.Strs[len(o.Strs)-1] != 0 {
			t.Fatal("accepted an unterminated string table")
		}
	})
}

// TestBinaryRoundTrip checks the record layouts against dtrace's
// structures.
func TestBinaryRoundTrip(t *testing.T) {
	v := Var{Name: 0x01020304, ID: 0x0500, Kind: KindArray, Scope: ScopeThread, Flags: FlagRef | FlagMod,
		Type: Type{Kind: TypeString, CtfKind: CTFUnknown, Flags: TFByRef, Size: 256}}
	b := AppendVar(nil, le, v)
	want := []byte{4, 3, 2, 1, 0, 5, 0, 0, 0, 1, 3, 0, 1, 0, 1, 0, 0, 1, 0, 0}
	if string(b) != string(want) {
		t.Errorf("difv % x, want % x", b, want)
	}
	if got, err := ParseVar(b, le); err != nil || got != v {
		t.Errorf("ParseVar: %+v %v", got, err)
	}
	be := AppendVar(nil, binary.BigEndian, v)
	if got, _ := ParseVar(be, binary.BigEndian); got != v || be[3] != 4 {
		t.Errorf("big-endian difv % x", be)
	}
	r := Relo{Name: 7, Type: RelocSetx, Offset: 16, Data: 0xdead}
	rb := AppendRelo(nil, le, r)
	if len(rb) != RelocSize {
		t.Fatalf("relo %d bytes", len(rb))
	}
	if got, err := ParseRelo(rb, le); err != nil || got != r {
		t.Errorf("ParseRelo: %+v %v", got, err)
	}
	code := []Instr{Setx(0, 1), Ret(1)}
	cb := AppendCode(nil, le, code)
	if string(cb) != "\x01\x00\x00\x25\x01\x00\x00\x23" {
		t.Errorf("code % x", cb)
	}
	if got, err := ParseCode(cb, le); err != nil || len(got) != 2 || got[0] != code[0] || got[1] != code[1] {
		t.Errorf("ParseCode: %v %v", got, err)
	}
	if _, err := ParseCode(cb[:3], le); err == nil {
		t.Error("ParseCode accepted 3 bytes")
	}
	if got, err := ParseInts(AppendInts(nil, le, []uint64{1, 1 << 63}), le); err != nil || got[1] != 1<<63 {
		t.Errorf("ints: %v %v", got, err)
	}
	for _, err := range []error{
		func() error { _, err := ParseType(nil, le); return err }(),
		func() error { _, err := ParseVar(make([]byte, 19), le); return err }(),
		func() error { _, err := ParseRelo(make([]byte, 23), le); return err }(),
		func() error { _, err := ParseInts(make([]byte, 9), le); return err }(),
	} {
		if err == nil {
			t.Error("short record accepted")
		}
	}
}
