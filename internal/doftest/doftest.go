// Package doftest builds DOF programs by hand, shaped as dtrace's
// compiler shapes them, for the tests of packages dof and kernel.
package doftest

import "github.com/kdtrace/kdtrace/dof"

// DIF opcodes used below (DIF_OP_*).
const (
	opCmp  = 15
	opBA   = 17
	opBE   = 18
	opMov  = 14
	opRet  = 35
	opSetX = 37
	opSetS = 38
	opLdGS = 41
	opLdTS = 44
	opStTS = 45
	opCall = 47
)

// Variables and subroutines used below.
const (
	varArg0     = 0x106
	varPID      = 0x116
	varExecname = 0x118
	subrSpec    = 10 // speculation()
)

func fmt3(op, r1, r2, rd uint32) uint32 { return op<<24 | r1<<16 | r2<<8 | rd }

// SetX encodes setx ints[idx], %rd.
func SetX(idx, rd uint32) uint32 { return opSetX<<24 | idx<<8 | rd }

// SetS encodes sets strs+off, %rd.
func SetS(off, rd uint32) uint32 { return opSetS<<24 | off<<8 | rd }

// Ret encodes ret %rd.
func Ret(rd uint32) uint32 { return fmt3(opRet, 0, 0, rd) }

// LdGS encodes ldgs var, %rd.
func LdGS(v, rd uint32) uint32 { return opLdGS<<24 | v<<8 | rd }

// LdTS encodes ldts var, %rd.
func LdTS(v, rd uint32) uint32 { return opLdTS<<24 | v<<8 | rd }

// StTS encodes stts %rs, var.
func StTS(v, rs uint32) uint32 { return opStTS<<24 | v<<8 | rs }

// Ba encodes ba label.
func Ba(label uint32) uint32 { return opBA<<24 | label }

// Call encodes call subr, %rd.
func Call(subr, rd uint32) uint32 { return opCall<<24 | subr<<8 | rd }

// CTF kinds used in types.
const (
	ctfInteger = 1
)

// Int is the DIF type of an integer of size bytes.
func Int(size uint32) dof.DIFType {
	return dof.DIFType{Kind: dof.TypeCTF, CKind: ctfInteger, Size: size}
}

// String is the DIF type of a string of size bytes.
func String(size uint32) dof.DIFType {
	return dof.DIFType{Kind: dof.TypeString, Flags: dof.TypeByRef, Size: size}
}

// Const is the DIFO of an integer constant, as dt_action_difconst makes
// it.
func Const(v uint64, size uint32) *dof.DIFO {
	return &dof.DIFO{Ret: Int(size), Code: []uint32{SetX(0, 1), Ret(1)}, Ints: []uint64{v}}
}

// Str is the DIFO of a string constant.
func Str(s string) *dof.DIFO {
	return &dof.DIFO{Ret: String(256), Code: []uint32{SetS(0, 1), Ret(1)}, Strs: append([]byte(s), 0)}
}

// Builtin is the DIFO that reads a built-in scalar variable, with the
// variable table entry dtrace's assembler gives it.
func Builtin(v uint32, name string, t dof.DIFType) *dof.DIFO {
	return &dof.DIFO{Ret: t, Code: []uint32{LdGS(v, 1), Ret(1)}, Strs: append([]byte(name), 0),
		Vars: []dof.DIFVar{{Name: 0, ID: v, Kind: dof.VarKindScalar, Scope: dof.VarScopeGlobal,
			Flags: dof.VarFlagRef, Type: t}}}
}

// Named is a program with a name for test tables.
type Named struct {
	Name string
	Prog *dof.Program
	// Helper is set for programs only helper DOF may carry.
	Helper bool
}

var (
	begin = dof.ProbeSpec{Provider: "dtrace", Name: "BEGIN"}
	end   = dof.ProbeSpec{Provider: "dtrace", Name: "END"}
)

// Programs returns a fresh table of programs: one for each shape of
// clause the compiler emits.
func Programs() []Named {
	specVar := dof.DIFVar{Name: 0, ID: 0x500, Kind: dof.VarKindScalar, Scope: dof.VarScopeThread,
		Flags: dof.VarFlagRef, Type: Int(4)}
	specVarW := specVar
	specVarW.Flags = dof.VarFlagMod
	readSpec := func() *dof.DIFO {
		return &dof.DIFO{Ret: Int(4), Code: []uint32{LdTS(0x500, 1), Ret(1)},
			Strs: []byte("spec\x00"), Vars: []dof.DIFVar{specVar}}
	}
	return []Named{
		{Name: "begin-trace", Prog: &dof.Program{ECBs: []dof.ECB{{
			Probe:   begin,
			Actions: []dof.Action{{Kind: dof.ActDIFExpr, DIFO: Const(1, 4)}},
		}}}},
		{Name: "empty-clause", Prog: &dof.Program{ECBs: []dof.ECB{{
			Probe: dof.ProbeSpec{Provider: "syscall", Function: "read", Name: "entry"},
		}}}},
		{Name: "printf", Prog: &dof.Program{ECBs: []dof.ECB{{
			Probe: begin,
			Actions: []dof.Action{
				{Kind: dof.ActPrintf, Format: "%d %s\n", DIFO: Const(1, 4)},
				{Kind: dof.ActDIFExpr, DIFO: Str("x")},
			},
		}}}},
		{Name: "aggregation-key", Prog: &dof.Program{ECBs: []dof.ECB{{
			Probe: dof.ProbeSpec{Provider: "syscall", Function: "read", Name: "entry"},
			Actions: []dof.Action{
				{Kind: dof.ActDIFExpr, DIFO: Const(1, 8)},
				{Kind: dof.ActDIFExpr, DIFO: Builtin(varExecname, "execname", String(256))},
				{Kind: dof.AggCount, NTuple: 2, DIFO: Const(1, 8)},
			},
		}, {
			Probe:   end,
			Actions: []dof.Action{{Kind: dof.ActPrinta, Format: "%-20s %@d\n", DIFO: Const(1, 8)}},
		}}}},
		{Name: "lquantize", Prog: &dof.Program{ECBs: []dof.ECB{{
			Probe: dof.ProbeSpec{Provider: "profile", Name: "tick-1ms"},
			Actions: []dof.Action{
				{Kind: dof.ActDIFExpr, DIFO: Const(2, 8)},
				{Kind: dof.AggLQuantize, NTuple: 1, Arg: dof.LQuantizeArg(-10, 5, 20),
					DIFO: Builtin(varArg0, "arg0", Int(8))},
				{Kind: dof.ActDIFExpr, DIFO: Const(3, 8)},
				{Kind: dof.AggLLQuantize, NTuple: 1, Arg: dof.LLQuantizeArg(10, 0, 6, 20),
					DIFO: Builtin(varArg0, "arg0", Int(8))},
			},
		}}}},
		{Name: "predicate", Prog: &dof.Program{ECBs: []dof.ECB{{
			Probe: dof.ProbeSpec{Provider: "syscall", Function: "write", Name: "entry"},
			Pred: &dof.DIFO{
				Ret: Int(4),
				Code: []uint32{
					LdGS(varPID, 1),
					SetX(0, 2),
					fmt3(opCmp, 1, 2, 0),
					opBE<<24 | 6,
					fmt3(opMov, 0, 0, 1),
					Ba(7),
					SetX(1, 1),
					Ret(1),
				},
				Ints: []uint64{123, 1},
				Strs: []byte("pid\x00"),
				Vars: []dof.DIFVar{{ID: varPID, Kind: dof.VarKindScalar, Scope: dof.VarScopeGlobal,
					Flags: dof.VarFlagRef, Type: Int(4)}},
			},
			Actions: []dof.Action{{Kind: dof.ActDIFExpr, DIFO: Builtin(varArg0, "arg0", Int(8))}},
		}}}},
		{Name: "speculation", Prog: &dof.Program{ECBs: []dof.ECB{{
			Probe: dof.ProbeSpec{Provider: "syscall", Function: "open", Name: "entry"},
			Actions: []dof.Action{
				{Kind: dof.ActDIFExpr, DIFO: &dof.DIFO{Ret: Int(4),
					Code: []uint32{Call(subrSpec, 1), StTS(0x500, 1), Ret(1)},
					Strs: []byte("spec\x00"), Vars: []dof.DIFVar{specVarW}}},
			},
		}, {
			Probe: dof.ProbeSpec{Provider: "syscall", Function: "open", Name: "entry"},
			Actions: []dof.Action{
				{Kind: dof.ActSpeculate, DIFO: readSpec()},
				{Kind: dof.ActDIFExpr, DIFO: Builtin(varArg0, "arg0", Int(8))},
			},
		}, {
			Probe: dof.ProbeSpec{Provider: "syscall", Function: "open", Name: "return"},
			Pred:  readSpec(),
			Actions: []dof.Action{
				{Kind: dof.ActCommit, DIFO: readSpec()},
			},
		}}}},
		{Name: "exit-options", Prog: &dof.Program{
			ECBs: []dof.ECB{{Probe: begin, Actions: []dof.Action{{Kind: dof.ActExit, DIFO: Const(0, 4)}}}},
			Options: []dof.Option{
				{ID: dof.OptQuiet, Value: 1},
				{ID: dof.OptBufSize, Value: 4 << 20},
				{ID: dof.OptCPU, Value: -1},
			},
		}},
		{Name: "stacks-and-libact", Prog: &dof.Program{ECBs: []dof.ECB{{
			Probe: dof.ProbeSpec{Provider: "fbt", Module: "kernel", Function: "vfs_read", Name: "entry", ID: 4242},
			UArg:  dof.ECBError,
			Actions: []dof.Action{
				{Kind: dof.ActStack, Arg: 5},
				{Kind: dof.ActUStack, Arg: dof.UStackArg(10, 64)},
				{Kind: dof.ActSym, DIFO: Builtin(varArg0, "arg0", Int(8))},
				{Kind: dof.ActLibAct, Arg: 3, DIFO: Const(1, 8), UArg: 7},
				{Kind: dof.ActDIFExpr, Format: "struct file *", DIFO: Builtin(varArg0, "arg0", Int(8))},
			},
		}}}},
		{Name: "relocations", Prog: &dof.Program{ECBs: []dof.ECB{{
			Probe: begin,
			Actions: []dof.Action{{Kind: dof.ActDIFExpr, DIFO: &dof.DIFO{
				Ret:   Int(8),
				Code:  []uint32{SetX(0, 1), Ret(1)},
				Ints:  []uint64{0},
				Strs:  []byte("hz\x00"),
				KRelo: []dof.RelDesc{{Name: 0, Type: dof.RelSetX, Offset: 0}},
			}}},
		}}}},
		{Name: "usdt-provider", Helper: true, Prog: &dof.Program{
			ECBs: []dof.ECB{{
				Probe:   dof.ProbeSpec{Provider: "dtrace", Module: "helper", Function: "ustack"},
				Actions: []dof.Action{{Kind: dof.ActDIFExpr, DIFO: Str("frame")}},
			}},
			Providers: []dof.Provider{{
				Name: "myapp",
				Attr: dof.ProviderAttr{Provider: dof.Attr{Name: 5, Data: 5, Class: 5},
					Args: dof.Attr{Name: 5, Data: 5, Class: 5}},
				Probes: []dof.Probe{
					{Func: "main", Name: "start", Offs: []uint32{0x10}, EnOffs: []uint32{0x8}},
					{Func: "handle", Name: "request", RelName: "handle.local",
						NArgs: []string{"char *", "int"}, XArgs: []string{"string", "int"},
						ArgMap: []uint8{0, 1}, Offs: []uint32{0x20, 0x44}},
				},
			}},
		}},
	}
}

// ByName returns the program of Programs with that name.
func ByName(name string) *dof.Program {
	for _, n := range Programs() {
		if n.Name == name {
			return n.Prog
		}
	}
	panic("doftest: no program " + name)
}
