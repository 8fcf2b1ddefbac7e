package dof

import "testing"

// TestPool: equal DIFOs are shared, DIFOs that differ in any part are
// not, the pool keeps copies of what it is given, and a program of
// shared DIFOs writes the same file as one of copies.
func TestPool(t *testing.T) {
	base := func() *DIFO {
		return &DIFO{
			Ret:   DIFType{Kind: 0, CKind: 1, Size: 8},
			Code:  []uint32{0x29011801, 0x23000001},
			Ints:  []uint64{1},
			Strs:  []byte("\x00execname\x00"),
			Vars:  []DIFVar{{Name: 1, ID: 280, Type: DIFType{Kind: 1, Size: 256}}},
			KRelo: []RelDesc{{Name: 1, Type: RelSetX}},
		}
	}
	changes := []func(d *DIFO){
		func(d *DIFO) { d.Ret.Size = 4 },
		func(d *DIFO) { d.Code[1] = 0x23000002 },
		func(d *DIFO) { d.Code = d.Code[:1] },
		func(d *DIFO) { d.Ints = nil },
		func(d *DIFO) { d.Strs = []byte("\x00execnamf\x00") },
		func(d *DIFO) { d.Vars[0].Flags = 1 },
		func(d *DIFO) { d.XlRefs = []XlRef{{}} },
		func(d *DIFO) { d.KRelo = nil },
		func(d *DIFO) { d.URelo = []RelDesc{{Name: 1, Type: RelSetX}} },
	}
	var p Pool
	given := base()
	first := p.Intern(given)
	if first == given || !sameDIFO(first, base()) {
		t.Error("the pool keeps the DIFO given, not a copy of it")
	}
	given.Code[0], given.Strs[1], given.Vars[0].ID = 0, 'X', 1 // the caller reuses its tables
	if got := p.Intern(base()); got != first {
		t.Error("an equal DIFO is not shared")
	}
	for i, change := range changes {
		d := base()
		change(d)
		if got := p.Intern(d); got == first || !sameDIFO(got, d) {
			t.Errorf("change %d: a different DIFO is shared with an earlier one", i)
		}
	}

	shared := &Program{}
	copies := &Program{}
	for range 3 {
		shared.ECBs = append(shared.ECBs, ECB{Probe: ProbeSpec{Provider: "dtrace", Name: "BEGIN"},
			Pred: first, Actions: []Action{{Kind: ActDIFExpr, DIFO: p.Intern(base())}}})
		copies.ECBs = append(copies.ECBs, ECB{Probe: ProbeSpec{Provider: "dtrace", Name: "BEGIN"},
			Pred: base(), Actions: []Action{{Kind: ActDIFExpr, DIFO: base()}}})
	}
	a, err := Write(shared, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Write(copies, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Error("shared DIFOs write another file than copies")
	}
}
