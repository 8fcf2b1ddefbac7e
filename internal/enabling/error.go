package enabling

import (
	"fmt"

	"github.com/kdtrace/kdtrace/dof"
)

// Error is a reason Load refused a DOF file.
type Error struct {
	// Section is the index of the section at fault, or -1 when the
	// fault is in the file header or before it.
	Section int
	// Type is the section's type as its header gives it.
	Type dof.SectType
	// Offset is the file offset of the bytes at fault: a header field,
	// a section header field, or an entry or field in a section's data.
	Offset uint64
	// Reason says what is wrong, in the kernel's words where it has
	// any (dtrace_dof_error's messages, without "failed to process
	// DOF: "). Checks the kernel makes without a message, and the few
	// kdtrace adds, have messages in the same style.
	Reason string
	// Err is the *dif.Error whose reason Reason is, when package dif
	// refused a DIFO's code, variables or relocations; Section and
	// Offset then place the fault in the DIF, VARTAB, STRTAB or RELTAB
	// section it came from.
	Err error
}

func (e *Error) Error() string {
	if e.Section < 0 {
		return fmt.Sprintf("dof: header, offset %#x: %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("dof: section %d (%s), offset %#x: %s", e.Section, e.Type, e.Offset, e.Reason)
}

// Unwrap returns the *dif.Error behind e, if any.
func (e *Error) Unwrap() error { return e.Err }

// Reasons, in the kernel's words (dtrace.c). Tests and callers may
// compare Error.Reason with them.
const (
	// Before dtrace_dof_slurp: dtrace_dof_copyin and dtrace_dof_property.
	ReasonTruncatedHeader = "truncated header"
	ReasonLoadSizeMax     = "load size exceeds maximum"
	ReasonLoadSize        = "invalid load size"
	ReasonTruncatedDOF    = "truncated DOF"

	// The header, in dtrace_dof_slurp.
	ReasonMagic           = "DOF magic string mismatch"
	ReasonModel           = "DOF has invalid data model"
	ReasonEncoding        = "DOF encoding mismatch"
	ReasonVersion         = "DOF version mismatch"
	ReasonDIFVersion      = "DOF uses unsupported instruction set"
	ReasonIntRegs         = "DOF uses too many integer registers"
	ReasonTupRegs         = "DOF uses too many tuple registers"
	ReasonIdent           = "DOF has invalid ident byte set"
	ReasonFlags           = "DOF has invalid flag bits set"
	ReasonSecSizeZero     = "zero section header size"
	ReasonTruncatedSecs   = "truncated section headers"
	ReasonMisalignedSecs  = "misaligned section headers"
	ReasonMisalignedSecSz = "misaligned section size"

	// Section headers, in dtrace_dof_slurp.
	ReasonIllegalSections = "illegal sections for enabling"
	ReasonLoadFlag        = "loadable section with load flag unset"
	ReasonSecAlign        = "bad section alignment"
	ReasonMisalignedSec   = "misaligned section"
	ReasonCorruptSec      = "corrupt section header"
	ReasonStrTab          = "non-terminating string table"

	// References between sections (dtrace_dof_sect).
	ReasonSecIndex    = "referenced section index is invalid"
	ReasonSecNotLoad  = "referenced section is not loadable"
	ReasonSecWrongTyp = "referenced section is the wrong type"

	// ECB and probe descriptions.
	ReasonTruncatedECB   = "truncated ECB description"
	ReasonECBAlign       = "bad alignment in ECB description"
	reasonProbeSection   = "invalid probe section"
	ReasonProbeAlign     = "bad alignment in probe description"
	ReasonTruncatedProbe = "truncated probe description"
	ReasonProbeProvider  = "corrupt probe provider"
	ReasonProbeModule    = "corrupt probe module"
	ReasonProbeFunction  = "corrupt probe function"
	ReasonProbeName      = "corrupt probe name"

	// Action descriptions.
	reasonActSection    = "invalid action section"
	reasonTruncatedAct  = "truncated action description"
	ReasonActAlign      = "bad alignment in action description"
	ReasonActEntExceeds = "section entry size exceeds total size"
	ReasonActEntSize    = "bad entry size in action description"
	ReasonActionsMax    = "actions exceed dtrace_actions_max"
	ReasonBogusFormat   = "bogus format string"
	ReasonEmptyFormat   = "empty format string"

	// DIFOs.
	reasonDIFOSection   = "invalid DIFO header section"
	ReasonDIFOAlign     = "bad alignment in DIFO header"
	ReasonDIFOSize      = "bad size in DIFO header"
	ReasonDIFOMax       = "exceeds maximum size"
	reasonNotLoaded     = "section not loaded"
	ReasonBadAlign      = "bad alignment"
	ReasonMultiDIF      = "multiple DIF sections"
	ReasonMultiInt      = "multiple integer tables"
	ReasonMultiStr      = "multiple string tables"
	ReasonMultiVar      = "multiple variable tables"
	ReasonEntSize       = "entry size mismatch"
	ReasonCorruptEnt    = "corrupt entry size"
	ReasonUnrecSubsec   = "unrecognized DIFO subsection"
	ReasonMissingDIF    = "missing DIF text"
	ReasonInvalidRelHdr = "invalid relocation header"
	ReasonInvalidRelSec = "invalid relocation section"
	ReasonRelOffset     = "bad relocation offset"
	ReasonRelMisaligned = "misaligned setx relo"
	ReasonRelType       = "invalid relocation type"

	// Options (dtrace_dof_options).
	ReasonOptAlign    = "bad alignment in option description"
	ReasonOptZeroEnt  = "zeroed option entry size"
	ReasonOptEntSize  = "bad option entry size"
	ReasonOptString   = "non-zero option string"
	ReasonOptUnset    = "unset option"
	ReasonOptRejected = "rejected option"

	// Helper providers (dtrace_helper_provider_validate).
	ReasonProvOffset     = "misaligned section offset"
	ReasonProvSmall      = "provider section too small"
	ReasonProvName       = "invalid provider name"
	ReasonProvEntSize    = "invalid entry size"
	ReasonProvEntAlign   = "misaligned entry size"
	ReasonProvFuncName   = "invalid function name"
	reasonProvFuncLong   = "function name too long"
	ReasonProvProbeName  = "invalid probe name"
	ReasonProvProbeOff   = "invalid probe offset"
	ReasonProvEnNull     = "is-enabled offsets with null section"
	ReasonProvEnOff      = "invalid is-enabled offset"
	ReasonProvZeroOffs   = "zero probe and is-enabled offsets"
	reasonProvZeroOffsV1 = "zero probe offsets"
	ReasonProvArgs       = "invalid args"
	ReasonProvNArgType   = "bad native argument type"
	reasonProvNArgLong   = "native argument type too long"
	ReasonProvNArgIndex  = "bad native argument index"
	ReasonProvXArgType   = "bad translated argument type"
	reasonProvXArgLong   = "translated argument type too long"
	reasonUnmatchedHelps = "unmatched helpers"
)

// Reasons for the checks the kernel makes without a message (EINVAL
// from dtrace_ecb_create and dtrace_helper_action_add), and for those
// kdtrace makes where the kernel would read outside the section it was
// pointed at, truncate silently or crash.
const (
	ReasonSecSizeSmall      = "section header size too small"
	ReasonProbeProviderLong = "probe provider name too long"
	reasonProbeModuleLong   = "probe module name too long"
	ReasonProbeFunctionLong = "probe function name too long"
	reasonProbeNameLong     = "probe name too long"
	ReasonRelName           = "invalid relocation name"

	ReasonActKind       = "invalid action kind"
	ReasonActNeedsDIFO  = "action requires a DIFO"
	ReasonActStrByRef   = "string result is not passed by reference"
	ReasonAct64         = "action requires a 64-bit value"
	ReasonActExit       = "exit requires a 32-bit value"
	ReasonActTooLarge   = "action record too large"
	ReasonSpecAfterData = "speculate follows a data-recording action"
	ReasonCommitTwice   = "more than one commit"
	ReasonAfterCommit   = "data-recording action follows commit"
	ReasonAggAfterSpec  = "aggregating action follows speculate or commit"
	ReasonAggKind       = "invalid aggregating action"
	ReasonAggLQuantize  = "invalid lquantize parameters"
	ReasonAggLLQuantize = "invalid llquantize parameters"
	ReasonAggNoTuple    = "aggregation without a tuple"
	ReasonAggShortTuple = "aggregation tuple is short of actions"
	ReasonECBTooLarge   = "ECB record size overflows"
	ReasonHelperAction  = "helper action is not a DIF expression"
)
