package enabling

import "github.com/kdtrace/kdtrace/dof"

// options reads the OPTDESC sections (dtrace_dof_options) and checks
// each setting as dtrace_state_option does.
func (l *loader) options() error {
	for i := range l.secs {
		s := &l.secs[i]
		if s.Type != dof.SectOptDesc {
			continue
		}
		switch {
		case s.Align != 8:
			return l.secErr(i, fAlign, ReasonOptAlign)
		case s.EntSize == 0:
			return l.secErr(i, fEntSize, ReasonOptZeroEnt)
		case s.EntSize < dof.OptDescSize:
			return l.secErr(i, fEntSize, ReasonOptEntSize)
		case s.Size%uint64(s.EntSize) != 0:
			// The kernel would read the last setting past the section.
			return l.secErr(i, fSize, ReasonCorruptEnt)
		}
		for off := uint64(0); off < s.Size; off += uint64(s.EntSize) {
			at := s.Offset + off
			d := dof.DecodeOptDesc(l.b[at:])
			v := int64(d.Value)
			switch {
			case d.StrTab != dof.SecIdxNone:
				return l.dataErr(i, at+4, ReasonOptString)
			case v == dof.OptUnset:
				return l.dataErr(i, at+8, ReasonOptUnset)
			case d.Option >= dof.OptMax:
				return l.dataErr(i, at, ReasonOptRejected)
			case d.Option != dof.OptCPU && v < 0:
				return l.dataErr(i, at+8, ReasonOptRejected)
			case d.Option == dof.OptDestructive && l.cfg.NoDestructive:
				return l.dataErr(i, at, ReasonOptRejected)
			}
			l.prog.Options = append(l.prog.Options, dof.Option{ID: d.Option, Value: v})
		}
	}
	return nil
}

// Defaults of the options records are sized with (dtrace_state_create).
const (
	DefaultStackFrames   = 20
	DefaultUStackFrames  = 20
	DefaultJStackFrames  = 50
	DefaultJStackStrSize = 512
)

// optValues returns the option values actions are sized with: the
// kernel's defaults for a new consumer (dtrace_state_create), then the
// program's settings.
func (l *loader) optValues() [dof.OptMax]int64 {
	var o [dof.OptMax]int64
	for i := range o {
		o[i] = dof.OptUnset
	}
	o[dof.OptBufPolicy] = dof.BufPolicySwitch
	o[dof.OptBufResize] = dof.BufResizeAuto
	o[dof.OptNSpec] = 1
	o[dof.OptSpecSize] = 32 << 10
	o[dof.OptCPU] = -1
	o[dof.OptStrSize] = int64(l.cfg.StrSize)
	o[dof.OptStackFrames] = DefaultStackFrames
	o[dof.OptUStackFrames] = DefaultUStackFrames
	o[dof.OptCleanRate] = 9900990
	o[dof.OptAggRate] = 1e9
	o[dof.OptSwitchRate] = 1e9
	o[dof.OptStatusRate] = 1e9
	o[dof.OptJStackFrames] = DefaultJStackFrames
	o[dof.OptJStackStrSize] = DefaultJStackStrSize
	for _, s := range l.prog.Options {
		o[s.ID] = s.Value
	}
	return o
}
