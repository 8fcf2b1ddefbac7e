package bpf

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// Subroutines that scan strings run their loops through bpf_loop: the
// verifier checks a callback once for each call of bpf_loop, whatever
// the count, where it walks an inline loop once per byte, and a clause
// of many such calls would pass its limits. The callbacks are
// subprograms after the program's code, one for each kind of loop
// however many calls use it. A callback keeps its state in MapState's
// words at StateLoop (its context pointer is not used) and reads the
// strings the caller copied into MapStrBuf, so it cannot fault.

// maxLoops is the most iterations bpf_loop takes (BPF_MAX_LOOPS).
const maxLoops = 1 << 23

// Registers of a callback, set by enter.
const (
	cIndex   = asm.R6 // the iteration, bpf_loop's first argument
	cState   = asm.R7 // MapState's value
	cBuf     = asm.R8 // MapStrBuf's value
	cScratch = asm.R9 // MapScratch's value
)

// loopWord is the offset in MapState of the callbacks' word i.
func loopWord(i int) int16 { return stateLoop + 8*int16(i) }

// callback notes the callback name, whose body emits its code after
// enter; it is emitted once, after the program's code.
func (t *translator) callback(name string, body func()) string {
	sym := "cb_" + name
	if t.bodies == nil {
		t.bodies = map[string]func(){}
	}
	if _, ok := t.bodies[sym]; !ok {
		t.bodies[sym] = body
		t.funcs = append(t.funcs, sym)
	}
	return sym
}

// loop calls bpf_loop with the count in R1, at most maxLoops, and the
// callback fn.
func (t *translator) loop(fn string) {
	t.loops++
	n := fmt.Sprintf("%s_n%d", fn, t.loops)
	t.emit(asm.JLE.Imm(asm.R1, maxLoops, n))
	t.emit(asm.Mov.Imm(asm.R1, maxLoops))
	t.mark(n)
	t.emit(asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: asm.R2, Src: asm.PseudoFunc, Constant: -1}.WithReference(fn))
	t.emit(asm.Mov.Imm(asm.R3, 0))
	t.emit(asm.Mov.Imm(asm.R4, 0))
	t.emit(asm.FnLoop.Call())
}

// functions appends the callbacks' code, each starting at its symbol.
// A program that refers to a callback or has functions of its own must
// describe its functions in BTF (func_info): the program is one global
// function of its context, each of its own functions a static one of
// its context, and each callback a static one of the iteration and a
// context.
func (t *translator) functions() {
	if len(t.funcs) == 0 && len(t.subs) == 0 && len(t.helpers) == 0 {
		return
	}
	long := &btf.Int{Name: "long", Size: 8, Encoding: btf.Signed}
	ptr := &btf.Pointer{Target: &btf.Void{}}
	prog := &btf.FuncProto{Return: &btf.Int{Name: "int", Size: 4, Encoding: btf.Signed},
		Params: []btf.FuncParam{{Name: "ctx", Type: ptr}}}
	t.out[0] = btf.WithFuncMetadata(t.out[0], &btf.Func{Name: "kd_prog", Linkage: btf.GlobalFunc, Type: prog})
	for _, s := range t.subs {
		t.out[s.at] = btf.WithFuncMetadata(t.out[s.at], &btf.Func{Name: s.name, Linkage: btf.StaticFunc, Type: prog})
	}
	proto := &btf.FuncProto{Return: long, Params: []btf.FuncParam{
		{Name: "index", Type: &btf.Int{Name: "unsigned int", Size: 4}}, {Name: "ctx", Type: ptr}}}
	for i := 0; i < len(t.funcs); i++ {
		sym := t.funcs[i]
		start := len(t.out)
		t.mark(sym)
		t.enter(sym)
		t.bodies[sym]()
		t.out[start] = btf.WithFuncMetadata(t.out[start], &btf.Func{Name: sym, Linkage: btf.StaticFunc, Type: proto})
	}
	// A helper's function is static, of the helper's arguments: two
	// pointers for a map lookup, none for the CPU's number.
	for _, fn := range t.helpers {
		var params []btf.FuncParam
		if fn == asm.FnMapLookupElem {
			params = []btf.FuncParam{{Name: "map", Type: ptr}, {Name: "key", Type: ptr}}
		}
		start := len(t.out)
		t.mark(helperName(fn))
		t.emit(fn.Call())
		t.emit(asm.Return())
		t.out[start] = btf.WithFuncMetadata(t.out[start], &btf.Func{Name: helperName(fn), Linkage: btf.StaticFunc,
			Type: &btf.FuncProto{Return: long, Params: params}})
	}
}

// helper appends a call of the helper fn. In a chain's program (shared),
// a map lookup or the CPU's number is called through a function of the
// program's own, made once: the verifier inlines these helpers where
// they are called (do_misc_fixups), each time moving the whole program
// and its analysis's data, which for a program of thousands of lookups
// costs more than all else of its load. Called from one place on maps
// of different kinds, a lookup is not inlined at all; a lone program,
// short, has each inlined.
func (t *translator) helper(fn asm.BuiltinFunc) {
	if !t.shared || fn != asm.FnMapLookupElem && fn != asm.FnGetSmpProcessorId {
		t.emit(fn.Call())
		return
	}
	if !slices.Contains(t.helpers, fn) {
		t.helpers = append(t.helpers, fn)
	}
	t.emit(asm.Call.Label(helperName(fn)))
}

// helperName is the name of the function that calls the helper fn.
func helperName(fn asm.BuiltinFunc) string {
	if fn == asm.FnMapLookupElem {
		return "kd_lookup"
	}
	return "kd_cpu"
}

// enter starts a callback: the iteration kept, the maps' values looked
// up (none missing, but the verifier wants the test).
func (t *translator) enter(sym string) {
	t.emit(asm.Mov.Reg(cIndex, asm.R1))
	t.emit(storeImm64(asm.R10, -8, 0))
	for _, m := range []struct {
		dst  asm.Register
		name string
	}{{cState, MapState}, {cBuf, MapStrBuf}, {cScratch, mapScratch}} {
		t.mapPtr(asm.R1, m.name)
		t.emit(asm.Mov.Reg(asm.R2, asm.R10))
		t.emit(asm.Add.Imm(asm.R2, -8))
		t.helper(asm.FnMapLookupElem)
		t.emit(asm.JNE.Imm(asm.R0, 0, sym+"_"+m.name))
		t.emit(asm.Mov.Imm(asm.R0, 1))
		t.emit(asm.Return())
		t.mark(sym + "_" + m.name)
		t.emit(asm.Mov.Reg(m.dst, asm.R0))
	}
}

// stop and more end a callback's iteration: stop ends the loop.
func (t *translator) stop() {
	t.emit(asm.Mov.Imm(asm.R0, 1))
	t.emit(asm.Return())
}

func (t *translator) more() {
	t.emit(asm.Mov.Imm(asm.R0, 0))
	t.emit(asm.Return())
}

// bufByte loads into dst the byte of MapStrBuf at the offset in idx
// plus off, or 0 past its end.
func (t *translator) bufByte(dst, idx asm.Register, off int32, label string) {
	t.emit(asm.Mov.Reg(dst, idx))
	if off != 0 {
		t.emit(asm.Add.Imm(dst, off))
	}
	t.emit(asm.JLT.Imm(dst, int32(t.l.strBufSize()), label+"_in"))
	t.emit(asm.Mov.Imm(dst, 0))
	t.emit(asm.Ja.Label(label + "_out"))
	t.mark(label + "_in")
	t.emit(asm.Add.Reg(dst, cBuf))
	t.emit(asm.LoadMem(dst, dst, 0, asm.Byte))
	t.mark(label + "_out")
	t.emit(asm.Mov.Reg(dst, dst))
}
