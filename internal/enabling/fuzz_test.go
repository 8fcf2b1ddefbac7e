package enabling_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/doftest"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// FuzzLoad feeds Load mutated DOF, seeded with the test programs and
// their malformed shapes. Load must not panic; it either takes the DOF
// or refuses it with an *Error that has a reason. What it takes, written
// again, loads to the same program.
func FuzzLoad(f *testing.F) {
	for _, n := range doftest.Programs() {
		b, err := dof.Write(n.Prog, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, n.Helper)
	}
	for _, c := range malformedCases() {
		if c.mutate == nil || c.cfg != nil {
			continue
		}
		b, err := dof.Write(c.prog, c.opts)
		if err != nil {
			f.Fatal(err)
		}
		r, err := dof.Read(b, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(c.mutate(b, r), false)
	}
	opts, err := dof.OptionsDOF([]dof.Option{{ID: dof.OptQuiet, Value: 1}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(opts, false)

	f.Fuzz(func(t *testing.T, b []byte, helper bool) {
		cfg := &enabling.Config{Helper: helper}
		p, err := enabling.Load(b, cfg)
		if err != nil {
			var ke *enabling.Error
			if !errors.As(err, &ke) || ke.Reason == "" {
				t.Fatalf("refused without a reason: %v", err)
			}
			if ke.Section >= 0 && ke.Offset >= uint64(len(b)) {
				t.Fatalf("error offset %#x beyond the file: %v", ke.Offset, err)
			}
			return
		}
		if p == nil {
			t.Fatal("no program and no error")
		}
		d := asDOF(p)
		again, err := dof.Write(d, &dof.Options{Model: p.Model, Version: p.Version})
		if err != nil {
			// Load takes some shapes Write does not make, such as
			// relocations named in another DIFO's string table.
			return
		}
		q, err := enabling.Load(again, cfg)
		if err != nil {
			t.Fatalf("taken, written again and refused: %v", err)
		}
		if diff := cmp.Diff(d, asDOF(q), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("taken, written again and loaded differently (-first +second):\n%s", diff)
		}
	})
}
