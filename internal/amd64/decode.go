package amd64

import (
	"errors"
	"fmt"

	"golang.org/x/arch/x86/x86asm"
)

// maxInstLen is the architectural limit on the length of an instruction.
const maxInstLen = 15

// A DecodeError reports bytes on a path of execution that cannot be decoded.
type decodeError struct {
	Addr  uint64 // address of the first byte
	Bytes []byte // up to 15 bytes from Addr
	Err   error  // the cause
}

func (e *decodeError) Error() string {
	return fmt.Sprintf("amd64: cannot decode instruction at %#x (% x): %v", e.Addr, e.Bytes, e.Err)
}

func (e *decodeError) Unwrap() error { return e.Err }

var (
	errUnknown   = errors.New("unknown instruction")
	errTruncated = errors.New("instruction runs past the end of the code")
	errOverlap   = errors.New("jump into the middle of another instruction")
	errEmpty     = errors.New("no code")
)

// Decode decodes the machine code of a whole function whose first byte is
// at addr, and returns its instructions in address order. They cover code
// exactly: bytes that are not code come out as Data.
//
// Decoding is in two passes. The first follows control flow from addr
// through fallthrough and direct branches, so that anything executable is
// decoded from a real instruction start whatever bytes lie around it; an
// undecodable instruction on such a path is an error (a *DecodeError). The
// second decodes the bytes no path reached, linearly: switch cases reached
// only through jump tables, and alignment padding. There a byte that does
// not decode, an instruction that would overlap one from the first pass,
// or a branch into the middle of an instruction marks the bytes as Data,
// since such bytes are more likely a table or literal than code.
func Decode(code []byte, addr uint64) ([]Inst, error) {
	if len(code) == 0 {
		return nil, &decodeError{Addr: addr, Err: errEmpty}
	}
	d := decoder{
		code:  code,
		addr:  addr,
		insts: make([]Inst, 0, len(code)/3+1), // instructions average about 4 bytes
		swept: make([]bool, 0, len(code)/3+1),
		start: make([]int32, len(code)),
	}
	for i := range d.start {
		d.start[i] = free
	}
	if err := d.follow(); err != nil {
		return nil, err
	}
	d.sweep()
	return d.collect(), nil
}

type decoder struct {
	code  []byte
	addr  uint64
	insts []Inst  // in discovery order
	swept []bool  // insts[i] came from the linear pass
	start []int32 // per byte: index into insts of the instruction starting there, or free or inside
}

// Values of decoder.start for bytes where no instruction starts.
const (
	free   = -1 // not decoded
	inside = -2 // inside an instruction
)

// follow decodes everything reachable from the entry.
func (d *decoder) follow() error {
	work := []int{0}
	for len(work) > 0 {
		off := work[len(work)-1]
		work = work[:len(work)-1]
		for {
			if d.start[off] >= 0 {
				break // already decoded from here on
			}
			if d.start[off] == inside {
				if d.lands(off) {
					break
				}
				return d.errorAt(off, errOverlap)
			}
			in, err := decodeOne(d.code[off:], d.addr+uint64(off))
			if err != nil {
				return d.errorAt(off, err)
			}
			if d.free(off, in.Len) {
				d.add(off, in, false)
			} else if !d.prefix(off, in) {
				return d.errorAt(off, errOverlap)
			}
			if t, ok := d.offset(in); ok {
				work = append(work, t)
			}
			off += in.Len
			if !in.Op.fallsThrough() || off >= len(d.code) {
				break
			}
		}
	}
	return nil
}

// sweep decodes linearly the bytes follow did not reach.
func (d *decoder) sweep() {
	for off := 0; off < len(d.code); {
		if d.start[off] != free {
			off++
			continue
		}
		in, err := decodeOne(d.code[off:], d.addr+uint64(off))
		if err != nil || !d.free(off, in.Len) {
			off++ // not code: collect makes it Data
			continue
		}
		d.add(off, in, true)
		off += in.Len
	}
}

// collect returns the instructions in address order, turning the swept
// instructions that branch into the middle of an instruction into Data and
// merging adjacent Data.
func (d *decoder) collect() []Inst {
	out := make([]Inst, 0, len(d.insts)+1)
	data := func(off, n int) {
		if k := len(out) - 1; k >= 0 && out[k].Op == Data && out[k].End() == d.addr+uint64(off) {
			out[k].Len += n
			return
		}
		out = append(out, Inst{Addr: d.addr + uint64(off), Len: n, Op: Data})
	}
	for off := 0; off < len(d.code); {
		i := d.start[off]
		if i < 0 {
			data(off, 1)
			off++
			continue
		}
		in := d.insts[i]
		if t, ok := d.offset(in); ok && d.swept[i] && d.start[t] < 0 && !d.lands(t) {
			data(off, in.Len)
		} else {
			out = append(out, in)
		}
		off += in.Len
	}
	return out
}

// Hand-written atomics jump over a lock prefix, as glibc's do:
//
//	cmpl $0, __libc_single_threaded(%rip); je 0f; lock; 0: decq (%rdi)
//
// The processor sees one instruction, lock decq, from the lock, and
// another, decq, from the label. Decode keeps the longer one, as objdump
// and the kernel's boundary check do, and accepts branches to the label.

// lands reports whether a branch to off, inside an instruction, lands on
// the instruction left after its prefixes.
func (d *decoder) lands(off int) bool {
	s := off
	for d.start[s] == inside {
		s--
	}
	return d.start[s] >= 0 && skipsPrefix(d.code, s, off, d.insts[d.start[s]].End()-d.addr)
}

// prefix handles in, decoded at off, overlapping an instruction already
// decoded after its prefixes: in replaces it. It reports whether that was
// the case.
func (d *decoder) prefix(off int, in Inst) bool {
	t := off
	for t < off+in.Len && d.start[t] == free {
		t++
	}
	if t == off+in.Len || d.start[t] < 0 {
		return false
	}
	i := d.start[t]
	if d.insts[i].End() != in.End() || !skipsPrefix(d.code, off, t, uint64(off+in.Len)) {
		return false
	}
	d.insts[i] = in
	d.start[off] = i
	for k := off + 1; k <= t; k++ {
		d.start[k] = inside
	}
	return true
}

// skipsPrefix reports whether code[s:off] are legacy prefixes and the
// instruction at off ends at end, as does the one at s.
func skipsPrefix(code []byte, s, off int, end uint64) bool {
	for _, c := range code[s:off] {
		if !isLegacyPrefix(c) {
			return false
		}
	}
	in, err := decodeOne(code[off:], 0)
	return err == nil && uint64(off+in.Len) == end
}

// offset returns the offset of in's direct branch target if it lies
// inside the code.
func (d *decoder) offset(in Inst) (int, bool) {
	switch in.Op {
	case jump, condJump:
		if in.Target >= d.addr && in.Target-d.addr < uint64(len(d.code)) {
			return int(in.Target - d.addr), true
		}
	}
	return 0, false
}

func (d *decoder) free(off, n int) bool {
	if off+n > len(d.code) {
		return false
	}
	for _, s := range d.start[off : off+n] {
		if s != free {
			return false
		}
	}
	return true
}

func (d *decoder) add(off int, in Inst, swept bool) {
	d.start[off] = int32(len(d.insts))
	d.insts = append(d.insts, in)
	d.swept = append(d.swept, swept)
	for i := off + 1; i < off+in.Len; i++ {
		d.start[i] = inside
	}
}

func (d *decoder) errorAt(off int, err error) error {
	b := d.code[off:min(off+maxInstLen, len(d.code))]
	return &decodeError{Addr: d.addr + uint64(off), Bytes: append([]byte(nil), b...), Err: err}
}

// decodeOne decodes the instruction at the start of b, which is at addr.
//
// x86asm decodes almost everything, but it returns some instructions it
// does not know as a one-byte prefix with Op 0 and no error: endbr64,
// which starts every function built with -fcf-protection, is the common
// one. So Op 0 counts as a failure, and failures get a second chance from
// lengthFallback, which knows those encodings. It also gets the length of
// vzeroupper and vzeroall wrong, by one.
func decodeOne(b []byte, addr uint64) (Inst, error) {
	x, err := x86asm.Decode(b, 64)
	if err == nil && x.Op != 0 {
		in := classify(x, addr)
		if x.Op == x86asm.VZEROUPPER || x.Op == x86asm.VZEROALL {
			// x86asm reads a ModR/M byte these do not have.
			in.Len = vexLen(b) + 1
		}
		return in, nil
	}
	if n, ok := lengthFallback(b); ok {
		return Inst{Addr: addr, Len: n, Op: Plain}, nil
	}
	if truncated(b) {
		return Inst{}, errTruncated
	}
	return Inst{}, errUnknown
}

// truncated reports whether b is the start of an instruction longer than
// b. x86asm cannot tell: it reports a short input as an unknown one-byte
// prefix, so decode b again padded to the maximum length.
func truncated(b []byte) bool {
	if len(b) >= maxInstLen {
		return false
	}
	var pad [maxInstLen]byte
	copy(pad[:], b)
	if x, err := x86asm.Decode(pad[:], 64); err == nil && x.Op != 0 {
		return x.Len > len(b)
	}
	n, ok := lengthFallback(pad[:])
	return ok && n > len(b)
}

func classify(x x86asm.Inst, addr uint64) Inst {
	in := Inst{Addr: addr, Len: x.Len, Op: Plain}
	rel, isRel := x.Args[0].(x86asm.Rel)
	target := in.End() + uint64(int64(rel))
	switch x.Op {
	case x86asm.JMP:
		if isRel {
			in.Op, in.Target = jump, target
		} else {
			in.Op = indirectJump
		}
	case x86asm.LJMP:
		in.Op = indirectJump
	case x86asm.JA, x86asm.JAE, x86asm.JB, x86asm.JBE, x86asm.JE, x86asm.JG,
		x86asm.JGE, x86asm.JL, x86asm.JLE, x86asm.JNE, x86asm.JNO, x86asm.JNP,
		x86asm.JNS, x86asm.JO, x86asm.JP, x86asm.JS, x86asm.JCXZ, x86asm.JECXZ,
		x86asm.JRCXZ, x86asm.LOOP, x86asm.LOOPE, x86asm.LOOPNE, x86asm.XBEGIN:
		in.Op, in.Target = condJump, target
	case x86asm.CALL:
		if isRel {
			in.Op, in.Target = Call, target
		} else {
			in.Op = indirectCall
		}
	case x86asm.LCALL:
		in.Op = indirectCall
	case x86asm.RET, x86asm.LRET, x86asm.IRET, x86asm.IRETD, x86asm.IRETQ,
		x86asm.SYSRET, x86asm.SYSEXIT:
		in.Op = Ret
	case x86asm.UD0, x86asm.UD1, x86asm.UD2:
		in.Op = Trap
	case x86asm.INT:
		if imm, ok := x.Args[0].(x86asm.Imm); ok && imm == 3 {
			in.Op = Trap
		}
	case x86asm.HLT:
		in.Op = halt
	case x86asm.NOP:
		in.Op = nop
	}
	return in
}

// lengthFallback returns the length of the instruction at the start of b
// for the encodings x86asm does not know or silently mis-decodes:
//
//	f3 0f 1e fa/fb        endbr64, endbr32, and the rest of the 0f 1e hint NOPs (rdssp)
//	0f 01 xx              clac, stac, rdpkru, wrpkru, serialize, encls, vmgexit, …
//	0f c7 /r              rdpid, rdseed and the rest of group 9
//	0f ae /r              group 15 (incssp, ptwrite, …)
//	0f 38 xx /r           adcx, adox, movdiri, … (this map never has an immediate)
//	0f 3a xx /r ib        (this map always has a one-byte immediate)
//
// Every one of these is prefixes, opcode, ModR/M and what the ModR/M
// implies, so the length follows from the encoding rules without knowing
// the instruction. Anything else is unknown: never guess a length.
func lengthFallback(b []byte) (int, bool) {
	n := 0
	for n < len(b) && isLegacyPrefix(b[n]) {
		n++
	}
	if n < len(b) && b[n]&0xf0 == 0x40 { // REX
		n++
	}
	if n+1 >= len(b) || b[n] != 0x0f {
		return 0, false
	}
	imm := 0
	switch b[n+1] {
	case 0x01, 0x1e, 0xc7, 0xae:
		n += 2
	case 0x38:
		n += 3
	case 0x3a:
		n += 3
		imm = 1
	default:
		return 0, false
	}
	m, ok := modrmLen(b[min(n, len(b)):])
	if !ok {
		return 0, false
	}
	n += m + imm
	if n > len(b) || n > maxInstLen {
		return 0, false
	}
	return n, true
}

// vexLen returns the length of the prefixes and the VEX prefix at the
// start of b, which x86asm has decoded as a VEX instruction.
func vexLen(b []byte) int {
	n := 0
	for isLegacyPrefix(b[n]) {
		n++
	}
	if b[n] == 0xc5 {
		return n + 2
	}
	return n + 3
}

func isLegacyPrefix(c byte) bool {
	switch c {
	case 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65:
		return true
	}
	return false
}

// modrmLen returns the length of the ModR/M byte at the start of b and the
// SIB byte and displacement it implies, in 64-bit mode (where the 0x67
// prefix does not change the form).
func modrmLen(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	mod, rm := b[0]>>6, b[0]&7
	if mod == 3 {
		return 1, true
	}
	n := 1
	if rm == 4 { // SIB
		if len(b) < 2 {
			return 0, false
		}
		n++
		if mod == 0 && b[1]&7 == 5 {
			n += 4
		}
	} else if mod == 0 && rm == 5 { // RIP-relative
		n += 4
	}
	switch mod {
	case 1:
		n++
	case 2:
		n += 4
	}
	return n, true
}

// TrimPadding returns code, the code of a function at addr, without the
// padding after its last instruction: the int3s and nops that fill the
// gap to the next function, for code whose end is known only as the
// next symbol's start (Linux's kallsyms gives no sizes). Padding is the
// trailing run of traps and nops that no branch targets, after an
// instruction that does not fall through; where the run follows one
// that does (a call of a function that does not return, then int3),
// nothing is trimmed.
func TrimPadding(code []byte, addr uint64) ([]byte, error) {
	insts, err := Decode(code, addr)
	if err != nil {
		return nil, err
	}
	targets := map[uint64]bool{}
	for _, in := range insts {
		if in.Op == jump || in.Op == condJump {
			targets[in.Target] = true
		}
	}
	end := len(insts)
	for end > 0 && (insts[end-1].Op == Trap || insts[end-1].Op == nop) && !targets[insts[end-1].Addr] {
		end--
	}
	if end == len(insts) || end == 0 || insts[end-1].Op.fallsThrough() {
		return code, nil
	}
	last := insts[end-1]
	return code[:last.Addr+uint64(last.Len)-addr], nil
}
