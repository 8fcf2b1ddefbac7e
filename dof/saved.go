package dof

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SectSaved is the type of kdtrace's own section in a saved program
// (kdtrace -A): outside dtrace.h's DOF_SECT_* range and never loadable,
// so that a kernel, which loads only what dofh_loadsz covers, passes
// over it as it passes over COMMENTS and UTSNAME. Its bytes are "KD" and
// the format's version.
const SectSaved SectType = 0x4b440001

// Saved is what a saved program records beside its ECBs: the images it
// was compiled against, the options it was compiled with, and where
// $target went in its DIF.
//
// The section is text, one record a line; string fields are quoted as
// Go quotes them:
//
//	kdtrace-saved 1
//	buildid "vmlinux" "eb4fbcd037e7253717950bf2b93bd5566f47c56f"
//	object "a.out" "0c5f3b4c6b1e5e0e2d1d2a9a1f4e8d7c6b5a4938"
//	option "bufsize" "8m"
//	target 2 -1 0
//	targetprobe 3
//	aggregation 0 "count"
//
// A buildid names an image (vmlinux, or a module by its name) and its
// GNU build-id in hex. An object is an object of the target process
// that the program's pid or USDT probes name, by the module name they
// give it (a.out for the executable), and its build-id. An option is a runtime option as the command line
// and the program's pragmas set it ("" for an option without a value).
// A target is an integer table slot that holds $target: the ECB's index,
// the action's index (-1 for the predicate) and the slot's index. An
// aggregation names an aggregation variable by the compiler's ID (from
// 0), for the output that names it (JSON).
type Saved struct {
	BuildIDs     []BuildID
	Objects      []BuildID
	Options      []SavedOption
	Target       []TargetSlot
	TargetProbes []int
	Aggregations []SavedAggregation
}

// BuildID is an image a program was compiled against and its build-id.
type BuildID struct {
	Name string // "vmlinux", a kernel module's name, or a process's object's
	ID   string // the GNU build-id, lower-case hex
}

// SavedOption is an option setting of a saved program.
type SavedOption struct {
	Name, Value string
}

// TargetSlot is an integer table slot of a DIFO that holds $target.
type TargetSlot struct {
	ECB    int // the ECB's index in the program
	Action int // the action's index in the ECB, -1 for its predicate
	Int    int // the slot's index in the DIFO's integer table
}

// DIFO returns the DIFO of p the slot is in, or an error if p has
// none there.
func (s TargetSlot) DIFO(p *Program) (*DIFO, error) {
	if s.ECB < 0 || s.ECB >= len(p.ECBs) {
		return nil, fmt.Errorf("dof: $target slot in ECB %d of %d", s.ECB, len(p.ECBs))
	}
	e := &p.ECBs[s.ECB]
	var d *DIFO
	switch {
	case s.Action == -1:
		d = e.Pred
	case s.Action >= 0 && s.Action < len(e.Actions):
		d = e.Actions[s.Action].DIFO
	}
	if d == nil || s.Int < 0 || s.Int >= len(d.Ints) {
		return nil, fmt.Errorf("dof: no $target slot %d in ECB %d action %d", s.Int, s.ECB, s.Action)
	}
	return d, nil
}

// SavedAggregation is an aggregation variable's name, without its @.
type SavedAggregation struct {
	ID   uint32
	Name string
}

// savedMagic is the first line of the section.
const savedMagic = "kdtrace-saved 1"

// Encode returns the section's bytes.
func (s *Saved) Encode() []byte {
	var b strings.Builder
	b.WriteString(savedMagic + "\n")
	for _, id := range s.BuildIDs {
		fmt.Fprintf(&b, "buildid %s %s\n", strconv.Quote(id.Name), strconv.Quote(id.ID))
	}
	for _, o := range s.Objects {
		fmt.Fprintf(&b, "object %s %s\n", strconv.Quote(o.Name), strconv.Quote(o.ID))
	}
	for _, o := range s.Options {
		fmt.Fprintf(&b, "option %s %s\n", strconv.Quote(o.Name), strconv.Quote(o.Value))
	}
	for _, t := range s.Target {
		fmt.Fprintf(&b, "target %d %d %d\n", t.ECB, t.Action, t.Int)
	}
	for _, e := range s.TargetProbes {
		fmt.Fprintf(&b, "targetprobe %d\n", e)
	}
	for _, a := range s.Aggregations {
		fmt.Fprintf(&b, "aggregation %d %s\n", a.ID, strconv.Quote(a.Name))
	}
	return []byte(b.String())
}

// DecodeSaved decodes a SectSaved section.
func DecodeSaved(b []byte) (*Saved, error) {
	lines := strings.Split(string(b), "\n")
	if lines[0] != savedMagic {
		return nil, fmt.Errorf("dof: saved program section starts %q, not %q", lines[0], savedMagic)
	}
	s := &Saved{}
	for i, line := range lines[1:] {
		if line == "" {
			if i != len(lines)-2 {
				return nil, fmt.Errorf("dof: saved program section: empty line %d", i+2)
			}
			continue
		}
		kind, rest, _ := strings.Cut(line, " ")
		var err error
		switch kind {
		case "buildid":
			var f []string
			if f, err = quotedFields(rest, 2); err == nil {
				s.BuildIDs = append(s.BuildIDs, BuildID{f[0], f[1]})
			}
		case "object":
			var f []string
			if f, err = quotedFields(rest, 2); err == nil {
				s.Objects = append(s.Objects, BuildID{f[0], f[1]})
			}
		case "option":
			var f []string
			if f, err = quotedFields(rest, 2); err == nil {
				s.Options = append(s.Options, SavedOption{f[0], f[1]})
			}
		case "target":
			var t TargetSlot
			var n int
			if n, err = fmt.Sscanf(rest, "%d %d %d", &t.ECB, &t.Action, &t.Int); err == nil && n == 3 {
				s.Target = append(s.Target, t)
			}
		case "targetprobe":
			var e int
			if e, err = strconv.Atoi(rest); err == nil && e < 0 {
				err = fmt.Errorf("ECB %d", e)
			}
			if err == nil {
				s.TargetProbes = append(s.TargetProbes, e)
			}
		case "aggregation":
			id, name, _ := strings.Cut(rest, " ")
			var n uint64
			var f []string
			if n, err = strconv.ParseUint(id, 10, 32); err == nil {
				if f, err = quotedFields(name, 1); err == nil {
					s.Aggregations = append(s.Aggregations, SavedAggregation{uint32(n), f[0]})
				}
			}
		default:
			err = fmt.Errorf("unknown record %q", kind)
		}
		if err != nil {
			return nil, fmt.Errorf("dof: saved program section, line %d: %v", i+2, err)
		}
	}
	return s, nil
}

// quotedFields splits s into n quoted strings separated by one space.
func quotedFields(s string, n int) ([]string, error) {
	var f []string
	for i := range n {
		if i > 0 {
			if !strings.HasPrefix(s, " ") {
				return nil, errors.New("fields not separated by a space")
			}
			s = s[1:]
		}
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return nil, err
		}
		v, _ := strconv.Unquote(q)
		f = append(f, v)
		s = s[len(q):]
	}
	if s != "" {
		return nil, fmt.Errorf("trailing %q", s)
	}
	return f, nil
}

// Saved returns the file's saved program section, or nil if it has
// none.
func (f *File) Saved() (*Saved, error) {
	for i, s := range f.Sections {
		if s.Type == SectSaved {
			return DecodeSaved(f.Data(i))
		}
	}
	return nil, nil
}
