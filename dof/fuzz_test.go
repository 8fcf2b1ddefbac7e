package dof_test

import (
	"bytes"
	"testing"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/doftest"
)

// FuzzRead feeds Read and File.Program mutated DOF. They must not
// panic; a program they decode, written again, reads back the same.
func FuzzRead(f *testing.F) {
	for _, n := range doftest.Programs() {
		b, err := dof.Write(n.Prog, &dof.Options{Comments: n.Name})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(write(f, translators()))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := dof.Read(b, nil)
		if err != nil {
			return
		}
		p, err := r.Program()
		if err != nil {
			return
		}
		again, err := dof.Write(p, nil)
		if err != nil {
			return
		}
		r2, err := dof.Read(again, nil)
		if err != nil {
			t.Fatalf("Read of Write output: %v", err)
		}
		q, err := r2.Program()
		if err != nil {
			t.Fatalf("Program of Write output: %v", err)
		}
		third, err := dof.Write(q, nil)
		if err != nil {
			t.Fatalf("Write of a program read from Write output: %v", err)
		}
		if !bytes.Equal(again, third) {
			t.Fatal("Write(Read(Write(p))) differs from Write(p)")
		}
	})
}

func write(t testing.TB, p *dof.Program) []byte {
	t.Helper()
	b, err := dof.Write(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
