package locals

import (
	"fmt"
	"strings"

	"github.com/kdtrace/kdtrace/dlang/check"
	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
)

// Merge keeps what f (the first probes') and g (the probe at's) agree
// on, for a clause whose description matches several probes: a
// variable whose code would differ at the probe named at is not
// available.
func Merge(f, g *check.Frame, at string) *check.Frame {
	for _, l := range f.Locals {
		if l.Unavailable != "" {
			continue
		}
		m := g.Lookup(l.Name)
		switch {
		case m != nil && m.Unavailable != "":
			l.Loc, l.Unavailable = nil, fmt.Sprintf("at %s: %s", at, m.Unavailable)
		case m == nil || len(m.Loc) == 0:
			l.Loc, l.Unavailable = nil, fmt.Sprintf("it is not in scope or optimized out at %s", at)
		case m.Loc.String() != l.Loc.String() || m.Type.String() != l.Type.String() ||
			fmt.Sprint(m.CallValues) != fmt.Sprint(l.CallValues) ||
			localKey(l, &f.Place) != localKey(m, &g.Place):
			l.Loc, l.Unavailable = nil, fmt.Sprintf("it lives elsewhere at %s than at the description's first probe: name the probes in descriptions of their own", at)
		}
	}
	f.Place.Entry = f.Place.Entry && g.Place.Entry
	return f
}

// localKey writes what of a place the code of l depends on: its
// location's, and, for a value on entry read from call sites, theirs
// and the CFA, where the return address is.
func localKey(l *check.Local, pl *check.Place) string {
	k := placeKey(l.Loc, pl)
	if len(l.CallValues) > 0 {
		k += fmt.Sprintf(" ra=cfa%d%+d", pl.CFA.Reg, pl.CFA.Off)
		for _, v := range l.CallValues {
			k += " call=" + placeKey(v.Value, pl)
		}
	}
	return k
}

// placeKey writes what of a place the code of a location depends on.
func placeKey(loc dwarfexpr.Expr, pl *check.Place) string {
	var b strings.Builder
	fmt.Fprintf(&b, "user=%t", pl.User)
	cfa := func() {
		fmt.Fprintf(&b, " cfa=%d%+d,%t", pl.CFA.Reg, pl.CFA.Off, pl.CFA.Err == nil)
	}
	for _, op := range loc {
		switch op.Code {
		case dwarfexpr.OpFbreg:
			fmt.Fprintf(&b, " fb=%s", pl.FrameBase)
			for _, f := range pl.FrameBase {
				if f.Code == dwarfexpr.OpCallFrameCFA {
					cfa()
				}
			}
		case dwarfexpr.OpCallFrameCFA:
			cfa()
		case dwarfexpr.OpAddr:
			fmt.Fprintf(&b, " bias=%d,%t,%d", pl.Bias, pl.PCBias, pl.PC)
		case dwarfexpr.OpEntryValue:
			fmt.Fprintf(&b, " entry=%t", pl.Entry)
		}
	}
	return b.String()
}
