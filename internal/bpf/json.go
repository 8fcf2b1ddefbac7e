package bpf

import (
	"fmt"
	"math"

	"github.com/cilium/ebpf/asm"

	"github.com/kdtrace/kdtrace/dif"
)

// States of json()'s scanner (dtrace_json_state_t).
const (
	jsonRest = iota + 1
	jsonObject
	jsonString
	jsonStringEscape
	jsonStringEscapeUnicode
	jsonColon
	jsonComma
	jsonValue
	jsonIdentifier
	jsonNumber
	jsonNumberFrac
	jsonNumberExp
	jsonCollectObject
)

// The callbacks' words json() uses.
const (
	jwCur           = iota // the place in the text
	jwState                // the scanner's state
	jwArrayElem            // the array element sought
	jwArrayPos             // the array element the scanner is in
	jwEscapes              // the hexadecimal digits of a \u escape so far
	jwIsKey                // the string is a key
	jwCollectString        // the string is in a value collected whole
	jwFoundKey             // the key sought was found
	jwInArray              // the scanner is in an array
	jwBraces               // braces open in a value collected whole
	jwBrackets             // brackets open in it
	jwElem                 // the key sought: its offset in the list of keys
	jwNElems               // the keys left
	jwDD                   // the bytes of the value so far
	jwResult               // 0 scanning, 1 found, 2 not found
	jwDest                 // the value's offset in scratch
	jwDestLen              // the bytes it may take: the text's with its NUL
	jwListLen              // the list of keys' bytes
	jwCmpPos               // the byte compared (jsonCmp)
	jwCmpEqual             // the key so far equal
	jwCmpLen               // the bytes compared
	jwIdxPos               // the byte of the index read (jsonIndex)
	jwIdxVal               // the index so far
	jwIdxNeg               // the index is negative
	jwIdxPhase             // 0 blanks, 1 sign, 2 digits
)

// json translates json(text, selector) as dtrace_json scans: the
// selector ("a.b[2].c") becomes a list of keys in MapStrBuf's second
// half, then one bpf_loop callback steps the scanner's state machine
// through the text, a byte an iteration, the value it finds in
// strlen(text)+1 bytes of scratch; NULL if it finds none.
func (t *translator) json(pc int, in dif.Instr, arg func(asm.Register, int), badAddr func(int), local func(string) string) {
	strsize, scratch := int32(t.l.strsize), int32(t.l.scratch)
	half := int32(t.l.strBufHalf())
	t.readString(0, 0, arg, badAddr, local("text"))
	t.putLoop(jwDestLen, asm.R0)
	t.readString(half, 1, arg, badAddr, local("elem"))
	t.emit(asm.Add.Imm(asm.R0, -1))
	t.putLoop(jwListLen, asm.R0)
	// Scratch for the text and the selector, as the kernel checks.
	t.getLoop(asm.R2, rState, jwDestLen)
	t.emit(asm.Add.Reg(asm.R2, asm.R0))
	t.emit(asm.Add.Imm(asm.R2, 1))
	t.emit(asm.LoadMem(asm.R1, rState, stateScratch, asm.DWord))
	t.emit(asm.Add.Reg(asm.R2, asm.R1))
	t.emit(asm.JLE.Imm(asm.R2, scratch, local("room")))
	t.faultAt(pc, faultNoScratch, 0, false)
	t.mark(local("room"))
	t.putLoop(jwDest, asm.R1)
	// The list of keys, in place of the selector.
	t.putLoopImm(jwElem, 0)
	t.putLoopImm(jwNElems, 1)
	t.emit(asm.Mov.Imm(asm.R1, strsize))
	t.loop(t.callback("json_list", t.jsonListStep))
	t.getLoop(asm.R1, rState, jwElem)
	t.emit(asm.JGT.Imm(asm.R1, half-1, local("listed")))
	t.emit(asm.LoadMem(asm.R2, asm.R10, strBufPtr, asm.DWord))
	t.emit(asm.Add.Reg(asm.R2, asm.R1))
	t.emit(asm.StoreImm(asm.R2, int16(half), 0, asm.Byte))
	t.mark(local("listed"))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.putLoop(jwListLen, asm.R1)
	for _, w := range []int{jwCur, jwArrayPos, jwEscapes, jwIsKey, jwCollectString, jwFoundKey, jwInArray,
		jwBraces, jwBrackets, jwElem, jwDD, jwResult} {
		t.putLoopImm(w, 0)
	}
	t.putLoopImm(jwState, jsonRest)
	t.emit(asm.LoadImm(asm.R1, math.MinInt64, asm.DWord))
	t.putLoop(jwArrayElem, asm.R1)
	t.emit(asm.Mov.Imm(asm.R1, 2*strsize+2))
	t.loop(t.callback("json", t.jsonStep))
	t.emit(asm.Mov.Imm(asm.R0, 0))
	t.getLoop(asm.R1, rState, jwResult)
	t.emit(asm.JNE.Imm(asm.R1, 1, local("done")))
	t.getLoop(asm.R1, rState, jwDest)
	t.emit(asm.LoadMem(asm.R0, rState, stateScrBase, asm.DWord))
	t.emit(asm.Add.Reg(asm.R0, asm.R1))
	t.getLoop(asm.R2, rState, jwDestLen)
	t.emit(asm.Add.Reg(asm.R1, asm.R2))
	t.emit(asm.StoreMem(rState, stateScratch, asm.R1, asm.DWord))
	t.mark(local("done"))
	t.set(in.RD(), asm.R0)
}

// jsonListStep turns byte i of the selector into the list of keys:
// "." and "[" end a key, "]" and a leading "[" go.
func (t *translator) jsonListStep() {
	const l = "cb_json_list_"
	half := int32(t.l.strBufHalf())
	t.getLoop(asm.R1, cState, jwListLen)
	t.emit(asm.JLT.Reg(cIndex, asm.R1, l+"in"))
	t.stop()
	t.mark(l + "in")
	t.bufByte(asm.R3, cIndex, half, l+"c")
	t.emit(asm.JEq.Imm(asm.R3, ']', l+"skip"))
	t.emit(asm.JNE.Imm(asm.R3, '[', l+"key"))
	t.emit(asm.JEq.Imm(cIndex, 0, l+"skip"))
	t.mark(l + "key")
	t.emit(asm.JEq.Imm(asm.R3, '.', l+"end"))
	t.emit(asm.JNE.Imm(asm.R3, '[', l+"put"))
	t.mark(l + "end")
	t.getLoop(asm.R1, cState, jwNElems)
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(jwNElems), asm.R1, asm.DWord))
	t.emit(asm.Mov.Imm(asm.R3, 0))
	t.mark(l + "put")
	t.getLoop(asm.R1, cState, jwElem)
	t.emit(asm.JGT.Imm(asm.R1, half-1, l+"skip"))
	t.emit(asm.Mov.Reg(asm.R2, asm.R1))
	t.emit(asm.Add.Reg(asm.R2, cBuf))
	t.emit(asm.StoreMem(asm.R2, int16(half), asm.R3, asm.Byte))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(jwElem), asm.R1, asm.DWord))
	t.mark(l + "skip")
	t.more()
}

// jsonStep runs the scanner on one byte of the text, or on the same
// byte again after a number or an identifier ends.
func (t *translator) jsonStep() {
	const l = "cb_json_"
	strsize, scratch := int32(t.l.strsize), int32(t.l.scratch)
	ld := func(dst asm.Register, w int) { t.getLoop(dst, cState, w) }
	st := func(w int, src asm.Register) { t.emit(asm.StoreMem(cState, loopWord(w), src, asm.DWord)) }
	set := func(w int, v int32) { t.putLoopImmIn(cState, w, v) }
	n := 0
	label := func(s string) string { n++; return fmt.Sprintf("%s%s%d", l, s, n) }
	// cc is the byte looked at, kept at R10-16.
	cc := func(dst asm.Register) { t.emit(asm.LoadMem(dst, asm.R10, -16, asm.DWord)) }
	result := func(v int32) {
		set(jwResult, v)
		t.stop()
	}
	fail := func() { result(2) }
	// found ends the scan: found if no key is left to descend into.
	found := func() {
		next := label("found")
		ld(asm.R1, jwNElems)
		t.emit(asm.JSGT.Imm(asm.R1, 1, next))
		result(1)
		t.mark(next)
		fail()
	}
	advance := func() { t.emit(asm.Ja.Label(l + "advance")) }
	again := func() { t.emit(asm.Ja.Label(l + "again")) }
	state := func(s int32) { set(jwState, s) }
	// put appends R5 to the value, within its bytes.
	put := func() {
		skip := label("put")
		ld(asm.R0, jwDD)
		ld(asm.R2, jwDestLen)
		t.emit(asm.JGE.Reg(asm.R0, asm.R2, skip))
		t.emit(asm.JGT.Imm(asm.R0, strsize, skip))
		ld(asm.R2, jwDest)
		t.emit(asm.JGT.Imm(asm.R2, scratch-1, skip))
		t.emit(asm.Add.Reg(asm.R2, asm.R0))
		t.emit(asm.Add.Reg(asm.R2, cScratch))
		t.emit(asm.StoreMem(asm.R2, 0, asm.R5, asm.Byte))
		t.mark(skip)
		ld(asm.R0, jwDD)
		t.emit(asm.Add.Imm(asm.R0, 1))
		st(jwDD, asm.R0)
	}
	putCC := func() {
		cc(asm.R5)
		put()
	}
	// end ends the value with a NUL, leaving its length in R4 and at
	// jwCmpLen, and starts the next.
	end := func() {
		skip := label("end")
		ld(asm.R4, jwDD)
		ld(asm.R2, jwDestLen)
		t.emit(asm.Add.Imm(asm.R2, -1))
		t.emit(asm.JLE.Reg(asm.R4, asm.R2, skip+"_n"))
		t.emit(asm.Mov.Reg(asm.R4, asm.R2))
		t.mark(skip + "_n")
		st(jwCmpLen, asm.R4)
		set(jwDD, 0)
		ld(asm.R2, jwDest)
		t.emit(asm.JGT.Imm(asm.R2, scratch-1, skip))
		t.emit(asm.JGT.Imm(asm.R4, strsize, skip))
		t.emit(asm.Add.Reg(asm.R2, asm.R4))
		t.emit(asm.Add.Reg(asm.R2, cScratch))
		t.emit(asm.StoreImm(asm.R2, 0, 0, asm.Byte))
		t.mark(skip)
		ld(asm.R4, jwCmpLen)
	}
	// valueByte loads into dst byte i of the value.
	valueByte := func(dst asm.Register, i int16, lbl string) {
		ld(dst, jwDest)
		t.emit(asm.Mov.Imm(asm.R0, 0))
		t.emit(asm.JGT.Imm(dst, scratch-8, lbl))
		t.emit(asm.Add.Reg(dst, cScratch))
		t.emit(asm.LoadMem(asm.R0, dst, i, asm.Byte))
		t.mark(lbl)
		t.emit(asm.Mov.Reg(dst, asm.R0))
	}
	// index reads the array element the key names (strtoll in base 10)
	// into jwArrayElem, and sets jwFoundKey if it is 0.
	index := func() {
		set(jwIdxPos, 0)
		set(jwIdxVal, 0)
		set(jwIdxNeg, 0)
		set(jwIdxPhase, 0)
		t.emit(asm.Mov.Imm(asm.R1, 2*strsize+2))
		t.loop(t.callback("json_index", t.jsonIndexStep))
		ld(asm.R1, jwIdxVal)
		ld(asm.R2, jwIdxNeg)
		pos := label("idx")
		t.emit(asm.JEq.Imm(asm.R2, 0, pos))
		t.emit(asm.Neg.Imm(asm.R1, 0))
		t.mark(pos)
		st(jwArrayElem, asm.R1)
		set(jwFoundKey, 0)
		t.emit(asm.JNE.Imm(asm.R1, 0, pos+"_nz"))
		set(jwFoundKey, 1)
		t.mark(pos + "_nz")
		t.emit(asm.Mov.Imm(asm.R0, 0))
	}
	space := func(reg asm.Register, yes string) {
		t.emit(asm.JEq.Imm(reg, ' ', yes))
		t.emit(asm.Mov.Reg(asm.R0, reg))
		t.emit(asm.Add.Imm(asm.R0, -'\t'))
		t.emit(asm.JLE.Imm(asm.R0, '\r'-'\t', yes))
	}
	inRange := func(reg asm.Register, lo, hi int32, yes string) {
		t.emit(asm.Mov.Reg(asm.R0, reg))
		t.emit(asm.Add.Imm(asm.R0, -lo))
		t.emit(asm.JLE.Imm(asm.R0, hi-lo, yes))
	}

	ld(asm.R1, jwCur)
	t.emit(asm.JLT.Imm(asm.R1, strsize, l+"in"))
	fail()
	t.mark(l + "in")
	t.bufByte(asm.R3, asm.R1, 0, l+"cc")
	t.emit(asm.StoreMem(asm.R10, -16, asm.R3, asm.DWord))
	t.emit(asm.JNE.Imm(asm.R3, 0, l+"go"))
	fail()
	t.mark(l + "go")
	ld(asm.R2, jwState)
	for s := int32(jsonRest); s <= jsonCollectObject; s++ {
		t.emit(asm.JEq.Imm(asm.R2, s, fmt.Sprintf("%ss%d", l, s)))
	}
	fail()

	t.mark(fmt.Sprintf("%ss%d", l, jsonRest))
	space(asm.R3, l+"advance")
	t.emit(asm.JNE.Imm(asm.R3, '{', l+"rest_arr"))
	state(jsonObject)
	advance()
	t.mark(l + "rest_arr")
	t.emit(asm.JNE.Imm(asm.R3, '[', l+"fail"))
	set(jwInArray, 1)
	set(jwArrayPos, 0)
	index()
	state(jsonValue)
	advance()

	t.mark(fmt.Sprintf("%ss%d", l, jsonObject))
	space(asm.R3, l+"advance")
	t.emit(asm.JNE.Imm(asm.R3, '"', l+"fail"))
	state(jsonString)
	set(jwIsKey, 1)
	advance()

	t.mark(fmt.Sprintf("%ss%d", l, jsonString))
	t.emit(asm.JNE.Imm(asm.R3, '\\', l+"str_quote"))
	t.emit(asm.Mov.Imm(asm.R5, '\\'))
	put()
	state(jsonStringEscape)
	advance()
	t.mark(l + "str_quote")
	t.emit(asm.JNE.Imm(asm.R3, '"', l+"str_put"))
	ld(asm.R1, jwCollectString)
	t.emit(asm.JEq.Imm(asm.R1, 0, l+"str_end"))
	putCC()
	set(jwCollectString, 0)
	state(jsonCollectObject)
	advance()
	t.mark(l + "str_end")
	end()
	ld(asm.R1, jwIsKey)
	t.emit(asm.JEq.Imm(asm.R1, 0, l+"str_value"))
	// A key: compared with the one sought.
	set(jwCmpPos, 0)
	set(jwCmpEqual, 1)
	t.emit(asm.Mov.Imm(asm.R1, strsize+2))
	t.loop(t.callback("json_cmp", t.jsonCmpStep))
	ld(asm.R1, jwCmpEqual)
	t.emit(asm.JEq.Imm(asm.R1, 0, l+"str_next"))
	set(jwFoundKey, 1)
	t.emit(asm.Ja.Label(l + "str_next"))
	t.mark(l + "str_value")
	ld(asm.R1, jwFoundKey)
	t.emit(asm.JEq.Imm(asm.R1, 0, l+"str_next"))
	found()
	t.mark(l + "str_next")
	ld(asm.R1, jwIsKey)
	state(jsonComma)
	t.emit(asm.JEq.Imm(asm.R1, 0, l+"str_comma"))
	state(jsonColon)
	t.mark(l + "str_comma")
	set(jwIsKey, 0)
	advance()
	t.mark(l + "str_put")
	putCC()
	advance()

	t.mark(fmt.Sprintf("%ss%d", l, jsonStringEscape))
	putCC()
	state(jsonString)
	cc(asm.R3)
	t.emit(asm.JNE.Imm(asm.R3, 'u', l+"advance"))
	set(jwEscapes, 0)
	state(jsonStringEscapeUnicode)
	advance()

	t.mark(fmt.Sprintf("%ss%d", l, jsonStringEscapeUnicode))
	inRange(asm.R3, '0', '9', l+"esc_hex")
	t.emit(asm.Mov.Reg(asm.R1, asm.R3))
	t.emit(asm.Or.Imm(asm.R1, 0x20))
	inRange(asm.R1, 'a', 'f', l+"esc_hex")
	fail()
	t.mark(l + "esc_hex")
	putCC()
	ld(asm.R1, jwEscapes)
	t.emit(asm.Add.Imm(asm.R1, 1))
	st(jwEscapes, asm.R1)
	t.emit(asm.JNE.Imm(asm.R1, 4, l+"advance"))
	state(jsonString)
	advance()

	t.mark(fmt.Sprintf("%ss%d", l, jsonColon))
	space(asm.R3, l+"advance")
	t.emit(asm.JNE.Imm(asm.R3, ':', l+"fail"))
	state(jsonValue)
	advance()

	t.mark(fmt.Sprintf("%ss%d", l, jsonComma))
	space(asm.R3, l+"advance")
	t.emit(asm.JNE.Imm(asm.R3, ',', l+"fail"))
	ld(asm.R1, jwInArray)
	t.emit(asm.JNE.Imm(asm.R1, 0, l+"comma_arr"))
	state(jsonObject)
	advance()
	t.mark(l + "comma_arr")
	state(jsonValue)
	ld(asm.R1, jwArrayPos)
	t.emit(asm.Add.Imm(asm.R1, 1))
	st(jwArrayPos, asm.R1)
	ld(asm.R2, jwArrayElem)
	t.emit(asm.JNE.Reg(asm.R1, asm.R2, l+"advance"))
	set(jwFoundKey, 1)
	advance()

	t.mark(fmt.Sprintf("%ss%d", l, jsonIdentifier))
	inRange(asm.R3, 'a', 'z', l+"id_put")
	end()
	// "true", "false" or "null", as the value's first bytes say.
	valueByte(asm.R1, 0, l+"id0")
	valueByte(asm.R2, 1, l+"id1")
	valueByte(asm.R3, 2, l+"id2")
	valueByte(asm.R5, 3, l+"id3")
	t.emit(asm.JEq.Imm(asm.R4, 5, l+"id_false"))
	t.emit(asm.JNE.Imm(asm.R4, 4, l+"fail"))
	t.emit(asm.JNE.Imm(asm.R1, 't', l+"id_null"))
	t.emit(asm.JNE.Imm(asm.R2, 'r', l+"fail"))
	t.emit(asm.JNE.Imm(asm.R3, 'u', l+"fail"))
	t.emit(asm.JNE.Imm(asm.R5, 'e', l+"fail"))
	t.emit(asm.Ja.Label(l + "id_ok"))
	t.mark(l + "id_null")
	t.emit(asm.JNE.Imm(asm.R1, 'n', l+"fail"))
	t.emit(asm.JNE.Imm(asm.R2, 'u', l+"fail"))
	t.emit(asm.JNE.Imm(asm.R3, 'l', l+"fail"))
	t.emit(asm.JNE.Imm(asm.R5, 'l', l+"fail"))
	t.emit(asm.Ja.Label(l + "id_ok"))
	t.mark(l + "id_false")
	t.emit(asm.JNE.Imm(asm.R1, 'f', l+"fail"))
	t.emit(asm.JNE.Imm(asm.R2, 'a', l+"fail"))
	t.emit(asm.JNE.Imm(asm.R3, 'l', l+"fail"))
	t.emit(asm.JNE.Imm(asm.R5, 's', l+"fail"))
	valueByte(asm.R1, 4, l+"id4")
	t.emit(asm.JNE.Imm(asm.R1, 'e', l+"fail"))
	t.mark(l + "id_ok")
	t.emit(asm.Ja.Label(l + "scalar_end"))
	t.mark(l + "id_put")
	putCC()
	advance()

	for _, s := range []int32{jsonNumber, jsonNumberFrac, jsonNumberExp} {
		t.mark(fmt.Sprintf("%ss%d", l, s))
		t.emit(asm.Ja.Label(l + "number"))
	}
	t.mark(l + "number")
	t.emit(asm.JNE.Imm(asm.R2, jsonNumber, l+"num_exp"))
	t.emit(asm.JNE.Imm(asm.R3, '.', l+"num_x"))
	putCC()
	state(jsonNumberFrac)
	advance()
	t.mark(l + "num_x")
	t.emit(asm.JEq.Imm(asm.R3, 'x', l+"fail"))
	t.emit(asm.JEq.Imm(asm.R3, 'X', l+"fail"))
	t.mark(l + "num_exp")
	t.emit(asm.JEq.Imm(asm.R2, jsonNumberExp, l+"num_digit"))
	t.emit(asm.Mov.Reg(asm.R1, asm.R3))
	t.emit(asm.Or.Imm(asm.R1, 0x20))
	t.emit(asm.JNE.Imm(asm.R1, 'e', l+"num_sign"))
	putCC()
	state(jsonNumberExp)
	advance()
	t.mark(l + "num_sign")
	t.emit(asm.JEq.Imm(asm.R3, '+', l+"fail"))
	t.emit(asm.JEq.Imm(asm.R3, '-', l+"fail"))
	t.mark(l + "num_digit")
	t.emit(asm.JEq.Imm(asm.R3, '+', l+"num_put"))
	t.emit(asm.JEq.Imm(asm.R3, '-', l+"num_put"))
	inRange(asm.R3, '0', '9', l+"num_put")
	end()
	t.emit(asm.Ja.Label(l + "scalar_end"))
	t.mark(l + "num_put")
	putCC()
	advance()
	// A number or an identifier ended: the value, or the byte again
	// after it.
	t.mark(l + "scalar_end")
	ld(asm.R1, jwFoundKey)
	t.emit(asm.JEq.Imm(asm.R1, 0, l+"scalar_next"))
	found()
	t.mark(l + "scalar_next")
	state(jsonComma)
	again()

	t.mark(fmt.Sprintf("%ss%d", l, jsonValue))
	space(asm.R3, l+"advance")
	t.emit(asm.JEq.Imm(asm.R3, '{', l+"val_nest"))
	t.emit(asm.JNE.Imm(asm.R3, '[', l+"val_str"))
	t.mark(l + "val_nest")
	ld(asm.R1, jwNElems)
	t.emit(asm.JSLE.Imm(asm.R1, 1, l+"val_collect"))
	ld(asm.R1, jwFoundKey)
	t.emit(asm.JEq.Imm(asm.R1, 0, l+"val_collect"))
	// Descend: the next key applies inside.
	set(jwInArray, 0)
	t.emit(asm.JNE.Imm(asm.R3, '[', l+"val_obj"))
	set(jwInArray, 1)
	t.mark(l + "val_obj")
	t.emit(asm.Mov.Imm(asm.R1, strsize+2))
	t.loop(t.callback("json_next", t.jsonNextStep))
	ld(asm.R1, jwNElems)
	t.emit(asm.Add.Imm(asm.R1, -1))
	st(jwNElems, asm.R1)
	set(jwDD, 0)
	ld(asm.R1, jwInArray)
	t.emit(asm.JEq.Imm(asm.R1, 0, l+"val_inobj"))
	state(jsonValue)
	set(jwArrayPos, 0)
	index()
	advance()
	t.mark(l + "val_inobj")
	set(jwFoundKey, 0)
	state(jsonObject)
	advance()
	t.mark(l + "val_collect")
	cc(asm.R3)
	t.emit(asm.JNE.Imm(asm.R3, '[', l+"val_brace"))
	set(jwBrackets, 1)
	t.emit(asm.Ja.Label(l + "val_collected"))
	t.mark(l + "val_brace")
	set(jwBraces, 1)
	t.mark(l + "val_collected")
	putCC()
	state(jsonCollectObject)
	advance()
	t.mark(l + "val_str")
	t.emit(asm.JNE.Imm(asm.R3, '"', l+"val_id"))
	state(jsonString)
	advance()
	t.mark(l + "val_id")
	inRange(asm.R3, 'a', 'z', l+"val_idput")
	t.emit(asm.JEq.Imm(asm.R3, '-', l+"val_num"))
	inRange(asm.R3, '0', '9', l+"val_num")
	fail()
	t.mark(l + "val_idput")
	putCC()
	state(jsonIdentifier)
	advance()
	t.mark(l + "val_num")
	putCC()
	state(jsonNumber)
	advance()

	t.mark(fmt.Sprintf("%ss%d", l, jsonCollectObject))
	putCC()
	cc(asm.R3)
	t.emit(asm.JNE.Imm(asm.R3, '"', l+"col_close"))
	set(jwCollectString, 1)
	state(jsonString)
	advance()
	t.mark(l + "col_close")
	ld(asm.R1, jwBrackets)
	ld(asm.R2, jwBraces)
	t.emit(asm.JNE.Imm(asm.R3, ']', l+"col_brace"))
	t.emit(asm.JEq.Imm(asm.R1, 0, l+"fail"))
	t.emit(asm.Add.Imm(asm.R1, -1))
	t.mark(l + "col_brace")
	t.emit(asm.JNE.Imm(asm.R3, '}', l+"col_open"))
	t.emit(asm.JEq.Imm(asm.R2, 0, l+"fail"))
	t.emit(asm.Add.Imm(asm.R2, -1))
	t.mark(l + "col_open")
	t.emit(asm.JNE.Imm(asm.R3, '{', l+"col_obracket"))
	t.emit(asm.Add.Imm(asm.R2, 1))
	t.mark(l + "col_obracket")
	t.emit(asm.JNE.Imm(asm.R3, '[', l+"col_count"))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.mark(l + "col_count")
	st(jwBrackets, asm.R1)
	st(jwBraces, asm.R2)
	t.emit(asm.Or.Reg(asm.R1, asm.R2))
	t.emit(asm.JNE.Imm(asm.R1, 0, l+"advance"))
	ld(asm.R1, jwFoundKey)
	t.emit(asm.JEq.Imm(asm.R1, 0, l+"col_skip"))
	end()
	result(1)
	t.mark(l + "col_skip")
	set(jwDD, 0)
	state(jsonComma)
	advance()

	t.mark(l + "fail")
	fail()
	t.mark(l + "advance")
	ld(asm.R1, jwCur)
	t.emit(asm.Add.Imm(asm.R1, 1))
	st(jwCur, asm.R1)
	t.mark(l + "again")
	t.more()
}

// jsonCmpStep compares byte jwCmpPos of the value (a key, jwCmpLen
// bytes) with the key sought; it ends at a difference, clearing
// jwCmpEqual, or after the key sought's NUL.
func (t *translator) jsonCmpStep() {
	const l = "cb_json_cmp_"
	strsize, scratch := int32(t.l.strsize), int32(t.l.scratch)
	half := int32(t.l.strBufHalf())
	t.getLoop(asm.R1, cState, jwCmpPos)
	t.getLoop(asm.R2, cState, jwElem)
	t.emit(asm.Add.Reg(asm.R2, asm.R1))
	t.bufByte(asm.R4, asm.R2, half, l+"key")
	t.getLoop(asm.R2, cState, jwCmpLen)
	t.emit(asm.JLT.Reg(asm.R1, asm.R2, l+"byte"))
	// The value's end: equal if the key sought ends too.
	t.emit(asm.JEq.Imm(asm.R4, 0, l+"stop"))
	t.mark(l + "differ")
	t.putLoopImmIn(cState, jwCmpEqual, 0)
	t.mark(l + "stop")
	t.stop()
	t.mark(l + "byte")
	t.getLoop(asm.R3, cState, jwDest)
	t.emit(asm.JGT.Imm(asm.R3, scratch-1, l+"differ"))
	t.emit(asm.JGT.Imm(asm.R1, strsize, l+"differ"))
	t.emit(asm.Add.Reg(asm.R3, asm.R1))
	t.emit(asm.Add.Reg(asm.R3, cScratch))
	t.emit(asm.LoadMem(asm.R3, asm.R3, 0, asm.Byte))
	t.emit(asm.JNE.Reg(asm.R3, asm.R4, l+"differ"))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(jwCmpPos), asm.R1, asm.DWord))
	t.more()
}

// jsonNextStep moves jwElem past the key sought's NUL, within the list.
func (t *translator) jsonNextStep() {
	const l = "cb_json_next_"
	half := int32(t.l.strBufHalf())
	t.getLoop(asm.R1, cState, jwElem)
	t.getLoop(asm.R2, cState, jwListLen)
	t.emit(asm.JGE.Reg(asm.R1, asm.R2, l+"past"))
	t.bufByte(asm.R3, asm.R1, half, l+"c")
	t.emit(asm.JEq.Imm(asm.R3, 0, l+"past"))
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(jwElem), asm.R1, asm.DWord))
	t.more()
	t.mark(l + "past")
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(jwElem), asm.R1, asm.DWord))
	t.stop()
}

// jsonIndexStep reads the key sought as dtrace_strtoll in base 10:
// blanks, a sign, digits; past the list it reads NULs.
func (t *translator) jsonIndexStep() {
	const l = "cb_json_index_"
	strsize := int32(t.l.strsize)
	half := int32(t.l.strBufHalf())
	t.getLoop(asm.R1, cState, jwIdxPos)
	t.getLoop(asm.R2, cState, jwElem)
	t.emit(asm.Add.Reg(asm.R2, asm.R1))
	t.emit(asm.Mov.Imm(asm.R3, 0))
	t.getLoop(asm.R4, cState, jwListLen)
	t.emit(asm.JGE.Reg(asm.R2, asm.R4, l+"got"))
	t.bufByte(asm.R3, asm.R2, half, l+"c")
	t.mark(l + "got")
	t.getLoop(asm.R4, cState, jwIdxPhase)
	t.emit(asm.JNE.Imm(asm.R4, 0, l+"sign"))
	t.emit(asm.JEq.Imm(asm.R3, ' ', l+"next"))
	t.emit(asm.JEq.Imm(asm.R3, '\t', l+"next"))
	t.putLoopImmIn(cState, jwIdxPhase, 1)
	t.more()
	t.mark(l + "sign")
	t.emit(asm.JNE.Imm(asm.R4, 1, l+"digit"))
	t.putLoopImmIn(cState, jwIdxPhase, 2)
	t.emit(asm.JEq.Imm(asm.R3, '+', l+"next"))
	t.emit(asm.JNE.Imm(asm.R3, '-', l+"unsigned"))
	t.putLoopImmIn(cState, jwIdxNeg, 1)
	t.emit(asm.Ja.Label(l + "next"))
	t.mark(l + "unsigned")
	t.more()
	t.mark(l + "digit")
	t.emit(asm.JGE.Imm(asm.R1, strsize, l+"stop"))
	t.emit(asm.Add.Imm(asm.R3, -'0'))
	t.emit(asm.JGT.Imm(asm.R3, 9, l+"stop"))
	t.getLoop(asm.R4, cState, jwIdxVal)
	t.emit(asm.Mul.Imm(asm.R4, 10))
	t.emit(asm.Add.Reg(asm.R4, asm.R3))
	t.emit(asm.StoreMem(cState, loopWord(jwIdxVal), asm.R4, asm.DWord))
	t.mark(l + "next")
	t.emit(asm.Add.Imm(asm.R1, 1))
	t.emit(asm.StoreMem(cState, loopWord(jwIdxPos), asm.R1, asm.DWord))
	t.more()
	t.mark(l + "stop")
	t.stop()
}
