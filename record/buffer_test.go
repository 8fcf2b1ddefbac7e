package record

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

func TestSharedActions(t *testing.T) {
	l := NewLayout(DefaultOptions)
	first, err := l.Add(&enabling.ECB{Actions: []enabling.Action{withFormat(act(dof.ActPrintf, i4), "%d\n")}},
		[]Probe{{ID: ProbeBegin, Name: "BEGIN"}})
	if err != nil {
		t.Fatal(err)
	}
	// One description matching two probes: two EPIDs, one list of
	// actions, one format, one aggregation (of the first ECB).
	eps, err := l.Add(&enabling.ECB{UArg: 7, Actions: []enabling.Action{
		withFormat(act(dof.ActPrintf, i4), "%d!\n"), act(dof.ActDIFExpr, i8), agg(dof.AggCount, 1, 0)}},
		[]Probe{{ID: 10, Name: "a"}, {ID: 11, Name: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if first[0].EPID != 1 || eps[0].EPID != 2 || eps[1].EPID != 3 {
		t.Errorf("EPIDs %d, %d, %d; want 1, 2, 3", first[0].EPID, eps[0].EPID, eps[1].EPID)
	}
	if eps[1].ProbeID != 11 || eps[1].UArg != 7 || eps[1].Recs[0].Format != 2 {
		t.Errorf("second ECB: probe %d, uarg %d, format %d; want 11, 7, 2", eps[1].ProbeID, eps[1].UArg, eps[1].Recs[0].Format)
	}
	if f, _ := l.Format(2); f != "%d!\n" {
		t.Errorf("format 2 is %q", f)
	}
	if _, err := l.Format(3); err == nil {
		t.Error("format 3 exists")
	}
	a, err := l.Agg(1)
	if err != nil || a.EPID != 2 {
		t.Errorf("aggregation 1: %v, %v; want that of EPID 2", a, err)
	}
	if _, err := l.Agg(2); err == nil {
		t.Error("aggregation 2 exists")
	}
}

func TestLayoutErrors(t *testing.T) {
	for _, acts := range [][]enabling.Action{
		{agg(dof.AggCount, 1, 0)},                                       // no key
		{act(dof.ActDIFExpr, i8), agg(dof.AggCount, 2, 0)},              // short key
		{act(dof.ActDIFExpr, i8), agg(dof.AggLQuantize, 1, 0)},          // no steps
		{act(dof.ActCommit, i4), act(dof.ActDIFExpr, i4)},               // data after commit
		{act(dof.ActDIFExpr, i4), act(dof.ActSpeculate, i4)},            // speculate after data
		{act(dof.ActExit, i8)},                                          // exit of a long
		{act(dof.ActSym, i4)},                                           // sym of an int
		{{Kind: dof.ActPrintf}},                                         // no DIFO
		{act(dof.ActDIFExpr, i8), agg(dof.AggSum, 1, 0), {Kind: 0x7ff}}, // unknown
	} {
		l := NewLayout(DefaultOptions)
		if eps, err := l.Add(&enabling.ECB{Actions: acts}, []Probe{{ID: 1}}); err == nil {
			t.Errorf("%v: laid out as %+v, want an error", acts, eps[0])
		}
	}
}

// TestRoundTrip writes firings and decodes them back: the padding the
// kernel writes before an 8-aligned firing, records at their offsets,
// strings cut at their NUL and padded with zeroes.
func TestRoundTrip(t *testing.T) {
	l := NewLayout(DefaultOptions)
	add := func(p Probe, acts ...enabling.Action) *EProbe {
		eps, err := l.Add(&enabling.ECB{Actions: acts}, []Probe{p})
		if err != nil {
			t.Fatal(err)
		}
		return eps[0]
	}
	hdr := add(Probe{ID: ProbeBegin, Provider: "dtrace", Name: "BEGIN"})
	mixed := add(Probe{ID: ProbeEnd, Provider: "dtrace", Name: "END"},
		act(dof.ActDIFExpr, i1), act(dof.ActDIFExpr, i8), act(dof.ActDIFExpr, str),
		act(dof.ActDIFExpr, st12), act(dof.ActUAddr, i8), act(dof.ActExit, i4))
	b := NewBuffer(4096)
	write := func(ep *EProbe, ts uint64, vals ...Value) {
		t.Helper()
		ok, err := b.Write(ep, ts, vals)
		if !ok || err != nil {
			t.Fatalf("Write(EPID %d) = %v, %v", ep.EPID, ok, err)
		}
	}
	write(hdr, 1)
	st := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	write(mixed, 0x1_0000_0002, Value{Int: 0x1ff}, Value{Int: 1 << 40}, Value{Ref: []byte("hi\x00junk")},
		Value{Ref: st}, Value{Int: 0x400000, PID: 42}, Value{Int: 3})
	data := b.Bytes()
	// The header alone (12 bytes), a padding word, then the 8-aligned
	// firing.
	if got := binary.LittleEndian.Uint32(data[12:]); got != EPIDNone {
		t.Errorf("word at 12 is %#x, want the padding EPIDNONE", got)
	}
	fs, err := decode(data, l)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 || fs[0].Offset != 0 || fs[1].Offset != 16 || fs[0].Timestamp != 1 || fs[1].Timestamp != 0x1_0000_0002 {
		t.Fatalf("decoded %+v", fs)
	}
	f := fs[1]
	le := binary.LittleEndian
	got := []any{f.Rec(0)[0], le.Uint64(f.Rec(1)), f.Rec(2), f.Rec(3), le.Uint64(f.Rec(4)), le.Uint64(f.Rec(4)[8:]), le.Uint32(f.Rec(5))}
	strRec := make([]byte, 256)
	copy(strRec, "hi")
	want := []any{byte(0xff), uint64(1 << 40), strRec, st, uint64(42), uint64(0x400000), uint32(3)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if len(data) != 16+int(mixed.Size) {
		t.Errorf("buffer holds %d bytes, want %d", len(data), 16+mixed.Size)
	}
}

func TestDrop(t *testing.T) {
	l := NewLayout(DefaultOptions)
	eps, _ := l.Add(&enabling.ECB{Actions: []enabling.Action{act(dof.ActDIFExpr, i8)}}, []Probe{{ID: 1}})
	b := NewBuffer(40)
	vals := []Value{{Int: 1}}
	if ok, err := b.Write(eps[0], 0, vals); !ok || err != nil {
		t.Fatalf("first write: %v, %v", ok, err)
	}
	if ok, _ := b.Write(eps[0], 0, vals); ok || b.Drops() != 1 {
		t.Errorf("second write of 24 bytes into 16 left: recorded %v, %d drops", ok, b.Drops())
	}
	b.Reset()
	if len(b.Bytes()) != 0 || b.Drops() != 0 {
		t.Error("Reset left data or drops")
	}
}

func TestDecodeErrors(t *testing.T) {
	l := NewLayout(DefaultOptions)
	eps, _ := l.Add(&enabling.ECB{Actions: []enabling.Action{act(dof.ActDIFExpr, i8)}}, []Probe{{ID: 1}})
	nothing, _ := l.Add(&enabling.ECB{Actions: []enabling.Action{act(dof.ActDIFExpr, void)}}, []Probe{{ID: 2}})
	full := make([]byte, eps[0].Size)
	PutHeader(full, eps[0].EPID, 0)
	silent := make([]byte, 12)
	PutHeader(silent, nothing[0].EPID, 0)
	for _, buf := range [][]byte{
		{1, 0},             // truncated EPID
		{9, 0, 0, 0},       // unknown EPID
		full[:len(full)-1], // truncated firing
		silent,             // an ECB that records nothing
		bytes.Repeat([]byte{0}, 6),
	} {
		if fs, err := decode(buf, l); err == nil {
			t.Errorf("decode(% x) = %v, want an error", buf, fs)
		}
	}
}

// TestManyProbes checks that an ECB enabled on many probes costs little
// for each: its EProbes share their layout, made in one allocation, as
// a clause on syscall:::entry makes 450 of them and 10,000 clauses 4.5
// million.
func TestManyProbes(t *testing.T) {
	const n = 1000
	probes := make([]Probe, n)
	for i := range probes {
		probes[i] = Probe{ID: uint32(i + 1)}
	}
	ecb := &enabling.ECB{UArg: 7, Actions: []enabling.Action{act(dof.ActDIFExpr, i8)}}
	// The layout's tables grow by doubling: a few allocations.
	allocs := testing.AllocsPerRun(10, func() {
		l := NewLayout(DefaultOptions)
		if _, err := l.Add(ecb, probes); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > n/10 {
		t.Errorf("an ECB on %d probes made %.0f allocations", n, allocs)
	}
	l := NewLayout(DefaultOptions)
	if _, err := l.Add(ecb, probes); err != nil {
		t.Fatal(err)
	}
	eps, err := l.Add(ecb, probes[:2])
	if err != nil {
		t.Fatal(err)
	}
	if eps[0].EPID != n+1 || eps[1].EPID != n+2 || eps[1].ProbeID != 2 || eps[1].UArg != 7 || eps[0].Size != eps[1].Size {
		t.Errorf("EProbes %+v, %+v", *eps[0], *eps[1])
	}
}

// decode walks a whole buffer with Next, as a consumer does.
func decode(buf []byte, d Describer) ([]Firing, error) {
	var fs []Firing
	for off := 0; ; {
		f, next, err := Next(buf, off, d)
		if err != nil || f.EProbe == nil {
			return fs, err
		}
		fs = append(fs, f)
		off = next
	}
}
