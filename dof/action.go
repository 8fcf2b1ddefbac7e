package dof

import "fmt"

// ActKind is an action kind (DTRACEACT_* and DTRACEAGG_*). The upper
// byte is the class of the action, the lower byte the action within it.
// DOF carries it in 32 bits; the kernel's dtrace_actkind_t has 16.
type ActKind uint32

// Action classes.
const (
	ActClassProc            ActKind = 0x0100 // records process data only
	ActClassProcDestructive ActKind = 0x0200 // may harm a process
	ActClassProcControl     ActKind = 0x0300
	ActClassKernel          ActKind = 0x0400 // records kernel data only
	ActClassKernDestructive ActKind = 0x0500 // may harm the kernel
	ActClassSpeculative     ActKind = 0x0600
	ActClassAggregation     ActKind = 0x0700
)

// Actions.
const (
	ActNone            ActKind = 0
	ActDIFExpr         ActKind = 1 // trace(), and the key and value expressions of aggregations
	ActExit            ActKind = 2
	ActPrintf          ActKind = 3
	ActPrinta          ActKind = 4
	ActLibAct          ActKind = 5 // done by the library (clear, normalize, …); Arg is DT_ACT_*
	ActTraceMem        ActKind = 6
	ActTraceMemDynSize ActKind = 7
	ActPrintm          ActKind = 8 // FreeBSD
	ActPrintt          ActKind = 9 // FreeBSD headers only: no kernel takes it

	ActUStack ActKind = ActClassProc + 1
	ActJStack ActKind = ActClassProc + 2
	ActUSym   ActKind = ActClassProc + 3
	ActUMod   ActKind = ActClassProc + 4
	ActUAddr  ActKind = ActClassProc + 5

	ActStop    ActKind = ActClassProcDestructive + 1
	ActRaise   ActKind = ActClassProcDestructive + 2
	ActSystem  ActKind = ActClassProcDestructive + 3
	ActFreopen ActKind = ActClassProcDestructive + 4

	ActStack ActKind = ActClassKernel + 1
	ActSym   ActKind = ActClassKernel + 2
	ActMod   ActKind = ActClassKernel + 3

	ActBreakpoint ActKind = ActClassKernDestructive + 1
	ActPanic      ActKind = ActClassKernDestructive + 2
	ActChill      ActKind = ActClassKernDestructive + 3

	ActSpeculate ActKind = ActClassSpeculative + 1
	ActCommit    ActKind = ActClassSpeculative + 2
	ActDiscard   ActKind = ActClassSpeculative + 3

	AggCount      ActKind = ActClassAggregation + 1
	AggMin        ActKind = ActClassAggregation + 2
	AggMax        ActKind = ActClassAggregation + 3
	AggAvg        ActKind = ActClassAggregation + 4
	AggSum        ActKind = ActClassAggregation + 5
	AggStddev     ActKind = ActClassAggregation + 6
	AggQuantize   ActKind = ActClassAggregation + 7
	AggLQuantize  ActKind = ActClassAggregation + 8
	AggLLQuantize ActKind = ActClassAggregation + 9
)

// String returns dtrace.h's name of the kind without its prefix.
func (k ActKind) String() string {
	switch k {
	case ActNone:
		return "NONE"
	case ActDIFExpr:
		return "DIFEXPR"
	case ActExit:
		return "EXIT"
	case ActPrintf:
		return "PRINTF"
	case ActPrinta:
		return "PRINTA"
	case ActLibAct:
		return "LIBACT"
	case ActTraceMem:
		return "TRACEMEM"
	case ActTraceMemDynSize:
		return "TRACEMEM_DYNSIZE"
	case ActPrintm:
		return "PRINTM"
	case ActPrintt:
		return "PRINTT"
	case ActUStack:
		return "USTACK"
	case ActJStack:
		return "JSTACK"
	case ActUSym:
		return "USYM"
	case ActUMod:
		return "UMOD"
	case ActUAddr:
		return "UADDR"
	case ActStop:
		return "STOP"
	case ActRaise:
		return "RAISE"
	case ActSystem:
		return "SYSTEM"
	case ActFreopen:
		return "FREOPEN"
	case ActStack:
		return "STACK"
	case ActSym:
		return "SYM"
	case ActMod:
		return "MOD"
	case ActBreakpoint:
		return "BREAKPOINT"
	case ActPanic:
		return "PANIC"
	case ActChill:
		return "CHILL"
	case ActSpeculate:
		return "SPECULATE"
	case ActCommit:
		return "COMMIT"
	case ActDiscard:
		return "DISCARD"
	case AggCount:
		return "COUNT"
	case AggMin:
		return "MIN"
	case AggMax:
		return "MAX"
	case AggAvg:
		return "AVG"
	case AggSum:
		return "SUM"
	case AggStddev:
		return "STDDEV"
	case AggQuantize:
		return "QUANTIZE"
	case AggLQuantize:
		return "LQUANTIZE"
	case AggLLQuantize:
		return "LLQUANTIZE"
	}
	return fmt.Sprintf("ACT(%#x)", uint32(k))
}

// Class returns the class of the action (DTRACEACT_CLASS).
func (k ActKind) Class() ActKind { return k & 0xff00 }

// IsAgg reports whether k is an aggregating action.
func (k ActKind) IsAgg() bool { return k.Class() == ActClassAggregation }

// IsDestructive reports whether k may harm a process or the kernel.
func (k ActKind) IsDestructive() bool {
	c := k.Class()
	return c == ActClassProcDestructive || c == ActClassKernDestructive
}

// IsSpeculative reports whether k is speculate, commit or discard.
func (k ActKind) IsSpeculative() bool { return k.Class() == ActClassSpeculative }

// IsPrintfLike reports whether k takes a printf format string: printf,
// printa, system and freopen.
func (k ActKind) IsPrintfLike() bool {
	return k == ActPrintf || k == ActPrinta || k == ActSystem || k == ActFreopen
}

// LQuantizeArg packs lquantize's parameters into an action's Arg.
func LQuantizeArg(base int32, step, levels uint16) uint64 {
	return uint64(step)<<48 | uint64(levels)<<32 | uint64(uint32(base))
}

// LQuantizeParams unpacks lquantize's parameters from an action's Arg.
func LQuantizeParams(arg uint64) (base int32, step, levels uint16) {
	return int32(uint32(arg)), uint16(arg >> 48), uint16(arg >> 32)
}

// LLQuantizeArg packs llquantize's parameters into an action's Arg.
func LLQuantizeArg(factor, low, high, nsteps uint16) uint64 {
	return uint64(factor)<<48 | uint64(low)<<32 | uint64(high)<<16 | uint64(nsteps)
}

// LLQuantizeParams unpacks llquantize's parameters from an action's Arg.
func LLQuantizeParams(arg uint64) (factor, low, high, nsteps uint16) {
	return uint16(arg >> 48), uint16(arg >> 32), uint16(arg >> 16), uint16(arg)
}

// UStackArg packs ustack's and jstack's frame count and string space
// into an action's Arg.
func UStackArg(nframes, strsize uint32) uint64 {
	return uint64(strsize)<<32 | uint64(nframes)
}

// UStackParams unpacks ustack's and jstack's parameters from an action's
// Arg.
func UStackParams(arg uint64) (nframes, strsize uint32) {
	return uint32(arg), uint32(arg >> 32)
}

// OptID identifies a run-time option (DTRACEOPT_*).
type OptID uint32

// Options.
const (
	OptBufSize       OptID = 0
	OptBufPolicy     OptID = 1
	OptDynVarSize    OptID = 2
	OptAggSize       OptID = 3
	OptSpecSize      OptID = 4
	OptNSpec         OptID = 5
	OptStrSize       OptID = 6
	OptCleanRate     OptID = 7
	OptCPU           OptID = 8
	OptBufResize     OptID = 9
	OptGrabAnon      OptID = 10
	OptFlowIndent    OptID = 11
	OptQuiet         OptID = 12
	OptStackFrames   OptID = 13
	OptUStackFrames  OptID = 14
	OptAggRate       OptID = 15
	OptSwitchRate    OptID = 16
	OptStatusRate    OptID = 17
	OptDestructive   OptID = 18
	OptStackIndent   OptID = 19
	OptRawBytes      OptID = 20
	OptJStackFrames  OptID = 21
	OptJStackStrSize OptID = 22
	OptAggSortKey    OptID = 23
	OptAggSortRev    OptID = 24
	OptAggSortPos    OptID = 25
	OptAggSortKeyPos OptID = 26
	OptTemporal      OptID = 27
	OptAggHist       OptID = 28
	OptAggPack       OptID = 29
	OptAggZoom       OptID = 30
	OptZone          OptID = 31
	OptMax           OptID = 32 // the number of options
)

// OptUnset is the value of an option that was not set
// (DTRACEOPT_UNSET).
const OptUnset = -2

// Values of the bufpolicy and bufresize options.
const (
	BufPolicyRing   = 0
	BufPolicyFill   = 1
	BufPolicySwitch = 2

	BufResizeAuto   = 0
	BufResizeManual = 1
)

var optNames = [...]string{
	"bufsize", "bufpolicy", "dynvarsize", "aggsize", "specsize", "nspec",
	"strsize", "cleanrate", "cpu", "bufresize", "grabanon", "flowindent",
	"quiet", "stackframes", "ustackframes", "aggrate", "switchrate",
	"statusrate", "destructive", "stackindent", "rawbytes", "jstackframes",
	"jstackstrsize", "aggsortkey", "aggsortrev", "aggsortpos",
	"aggsortkeypos", "temporal", "agghist", "aggpack", "aggzoom", "zone",
}

// String returns the option's name as dtrace -x spells it.
func (o OptID) String() string {
	if int(o) < len(optNames) {
		return optNames[o]
	}
	return fmt.Sprintf("option(%d)", uint32(o))
}

// Attr is a stability attribute triple: name stability, data stability
// and dependency class (dtrace_attribute_t), packed in DOF as
// DOF_ATTR(n, d, c).
type Attr struct {
	Name, Data, Class uint8
}

func (a Attr) pack() uint32 {
	return uint32(a.Name)<<24 | uint32(a.Data)<<16 | uint32(a.Class)<<8
}

func unpackAttr(v uint32) Attr {
	return Attr{Name: uint8(v >> 24), Data: uint8(v >> 16), Class: uint8(v >> 8)}
}

// The codes of D's action functions (DT_ACT_*): the ids of their
// identifiers in the compiler's table, numbered after the subroutines
// (DT_ACT_BASE is DIF_SUBR_MAX + 1), and the Arg of an ActLibAct
// record, which says which the library carries out.
const (
	DActBase = 55 // DIF_SUBR_MAX + 1

	DActPrintf = DActBase + iota - 1
	DActTrace
	DActTracemem
	DActStack
	DActStop
	DActBreakpoint
	DActPanic
	DActSpeculate
	DActCommit
	DActDiscard
	DActChill
	DActExit
	DActUstack
	DActPrinta
	DActRaise
	DActClear
	DActNormalize
	DActDenormalize
	DActTrunc
	DActSystem
	DActJstack
	DActFtruncate
	DActFreopen
	DActSym
	DActMod
	DActUsym
	DActUmod
	DActUaddr
	DActSetopt
	DActPrint
	DActPrintm
)

// actionRecords is the record kind each action function writes, indexed
// by its code less DActBase; ActNone where the record depends on the
// call (trace, print, printa, tracemem) and ActLibAct where the library
// carries the action out.
var actionRecords = [...]ActKind{
	DActPrintf - DActBase:      ActPrintf,
	DActStack - DActBase:       ActStack,
	DActStop - DActBase:        ActStop,
	DActBreakpoint - DActBase:  ActBreakpoint,
	DActPanic - DActBase:       ActPanic,
	DActSpeculate - DActBase:   ActSpeculate,
	DActCommit - DActBase:      ActCommit,
	DActDiscard - DActBase:     ActDiscard,
	DActChill - DActBase:       ActChill,
	DActExit - DActBase:        ActExit,
	DActUstack - DActBase:      ActUStack,
	DActRaise - DActBase:       ActRaise,
	DActSystem - DActBase:      ActSystem,
	DActJstack - DActBase:      ActJStack,
	DActFreopen - DActBase:     ActFreopen,
	DActSym - DActBase:         ActSym,
	DActMod - DActBase:         ActMod,
	DActUsym - DActBase:        ActUSym,
	DActUmod - DActBase:        ActUMod,
	DActUaddr - DActBase:       ActUAddr,
	DActPrintm - DActBase:      ActPrintm,
	DActClear - DActBase:       ActLibAct,
	DActNormalize - DActBase:   ActLibAct,
	DActDenormalize - DActBase: ActLibAct,
	DActTrunc - DActBase:       ActLibAct,
	DActFtruncate - DActBase:   ActLibAct,
	DActSetopt - DActBase:      ActLibAct,
}

// ActionRecord returns the kind of record D's action function dact
// (DT_ACT_*) writes, as libdtrace's dt_action_* choose it: ActLibAct for
// the actions the library carries out, ActNone where the record depends
// on the call (trace, print, printa, tracemem) or dact is no action.
func ActionRecord(dact uint32) ActKind {
	if i := dact - DActBase; dact >= DActBase && i < uint32(len(actionRecords)) {
		return actionRecords[i]
	}
	return ActNone
}
