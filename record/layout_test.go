package record

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// act is an action whose DIFO returns t.
func act(k dof.ActKind, t dif.Type) enabling.Action {
	return enabling.Action{Kind: k, DIFO: &dif.Object{Ret: t}}
}

var (
	i1   = dif.IntType(1)
	i4   = dif.IntType(4)
	i8   = dif.IntType(8)
	void = dif.Type{}
	str  = dif.StringType(256)
	// A 12-byte structure returned by reference.
	st12 = dif.Type{Kind: dif.TypeCTF, CtfKind: dif.CTFStruct, Flags: dif.TFByRef, Size: 12}
)

func withFormat(a enabling.Action, f string) enabling.Action { a.Format = f; return a }
func agg(k dof.ActKind, ntuple uint32, arg uint64) enabling.Action {
	return enabling.Action{Kind: k, NTuple: ntuple, Arg: arg}
}

// TestLayout checks the record layout of each action kind against
// dtrace_ecb_action_add and dtrace_ecb_resize, worked by hand.
func TestLayout(t *testing.T) {
	type ep struct {
		Size, Needed, Alignment uint32
		Recs                    []Rec
	}
	tests := []struct {
		name string
		acts []enabling.Action
		want ep
		aggs []*AggDesc
	}{
		{"no actions: the header alone", nil, ep{Size: 12, Needed: 12, Alignment: 4}, nil},
		{"nothing recorded", []enabling.Action{act(dof.ActDIFExpr, void)},
			ep{Size: 0, Needed: 12, Alignment: 4, Recs: []Rec{{Action: dof.ActDIFExpr, Offset: 12, Alignment: 1}}}, nil},
		{"trace(int)", []enabling.Action{act(dof.ActDIFExpr, i4)},
			ep{Size: 16, Needed: 16, Alignment: 4, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 4, Offset: 12, Alignment: 4}}}, nil},
		{"trace(char) rounds the size to 4", []enabling.Action{act(dof.ActDIFExpr, i1)},
			ep{Size: 16, Needed: 16, Alignment: 4, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 1, Offset: 12, Alignment: 1}}}, nil},
		{"trace(long) aligns to 8", []enabling.Action{act(dof.ActDIFExpr, i8)},
			ep{Size: 24, Needed: 24, Alignment: 8, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 8, Offset: 16, Alignment: 8}}}, nil},
		{"trace(char), trace(long)", []enabling.Action{act(dof.ActDIFExpr, i1), act(dof.ActDIFExpr, i8)},
			ep{Size: 24, Needed: 24, Alignment: 8, Recs: []Rec{
				{Action: dof.ActDIFExpr, Size: 1, Offset: 12, Alignment: 1},
				{Action: dof.ActDIFExpr, Size: 8, Offset: 16, Alignment: 8}}}, nil},
		{"trace(string) of strsize", []enabling.Action{act(dof.ActDIFExpr, str)},
			ep{Size: 272, Needed: 272, Alignment: 8, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 256, Offset: 16, Alignment: 8}}}, nil},
		{"a string of size 0 takes the strsize option", []enabling.Action{act(dof.ActDIFExpr, dif.StringType(0))},
			ep{Size: 48, Needed: 48, Alignment: 8, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 32, Offset: 16, Alignment: 8}}}, nil},
		{"trace(struct) by reference", []enabling.Action{act(dof.ActDIFExpr, st12)},
			ep{Size: 24, Needed: 24, Alignment: 4, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 12, Offset: 12, Alignment: 4}}}, nil},
		{"printf: one format per action", []enabling.Action{
			withFormat(act(dof.ActPrintf, i4), "%d %s\n"), withFormat(act(dof.ActPrintf, str), "%d %s\n")},
			ep{Size: 272, Needed: 272, Alignment: 8, Recs: []Rec{
				{Action: dof.ActPrintf, Size: 4, Offset: 12, Alignment: 4, Format: 1},
				{Action: dof.ActPrintf, Size: 256, Offset: 16, Alignment: 8, Format: 2}}}, nil},
		{"exit", []enabling.Action{act(dof.ActExit, i4)},
			ep{Size: 16, Needed: 16, Alignment: 4, Recs: []Rec{{Action: dof.ActExit, Size: 4, Offset: 12, Alignment: 4}}}, nil},
		{"stack() of the default depth", []enabling.Action{{Kind: dof.ActStack}},
			ep{Size: 176, Needed: 176, Alignment: 8, Recs: []Rec{{Action: dof.ActStack, Size: 160, Offset: 16, Alignment: 8, Arg: 20}}}, nil},
		{"stack(5)", []enabling.Action{{Kind: dof.ActStack, Arg: 5}},
			ep{Size: 56, Needed: 56, Alignment: 8, Recs: []Rec{{Action: dof.ActStack, Size: 40, Offset: 16, Alignment: 8, Arg: 5}}}, nil},
		{"ustack(): the pid, the frames", []enabling.Action{{Kind: dof.ActUStack}},
			ep{Size: 184, Needed: 184, Alignment: 8, Recs: []Rec{{Action: dof.ActUStack, Size: 168, Offset: 16, Alignment: 8, Arg: dof.UStackArg(20, 0)}}}, nil},
		{"ustack(3, 13): string space rounded to 8", []enabling.Action{{Kind: dof.ActUStack, Arg: dof.UStackArg(3, 13)}},
			ep{Size: 64, Needed: 64, Alignment: 8, Recs: []Rec{{Action: dof.ActUStack, Size: 48, Offset: 16, Alignment: 8, Arg: dof.UStackArg(3, 13)}}}, nil},
		{"jstack() takes the jstack options", []enabling.Action{{Kind: dof.ActJStack}},
			ep{Size: 936, Needed: 936, Alignment: 8, Recs: []Rec{{Action: dof.ActJStack, Size: 920, Offset: 16, Alignment: 8, Arg: dof.UStackArg(50, 512)}}}, nil},
		{"sym() and usym()", []enabling.Action{act(dof.ActSym, i8), act(dof.ActUSym, i8)},
			ep{Size: 40, Needed: 40, Alignment: 8, Recs: []Rec{
				{Action: dof.ActSym, Size: 8, Offset: 16, Alignment: 8},
				{Action: dof.ActUSym, Size: 16, Offset: 24, Alignment: 8}}}, nil},
		{"speculate alone keeps the header", []enabling.Action{act(dof.ActSpeculate, i4)},
			ep{Size: 12, Needed: 12, Alignment: 4, Recs: []Rec{{Action: dof.ActSpeculate, Offset: 12, Alignment: 1}}}, nil},
		{"speculate and nothing else recorded", []enabling.Action{act(dof.ActSpeculate, i4), act(dof.ActDIFExpr, void)},
			ep{Size: 0, Needed: 12, Alignment: 4, Recs: []Rec{
				{Action: dof.ActSpeculate, Offset: 12, Alignment: 1},
				{Action: dof.ActDIFExpr, Offset: 12, Alignment: 1}}}, nil},
		{"tracemem(p, 10, n)", []enabling.Action{
			act(dof.ActTraceMem, dif.Type{Kind: dif.TypeCTF, Flags: dif.TFByRef, Size: 10}), act(dof.ActTraceMemDynSize, i8)},
			ep{Size: 32, Needed: 32, Alignment: 8, Recs: []Rec{
				{Action: dof.ActTraceMem, Size: 10, Offset: 12, Alignment: 2},
				{Action: dof.ActTraceMemDynSize, Size: 8, Offset: 24, Alignment: 8}}}, nil},
		{"@a[\"k\"] = count(): the key beyond the firing", []enabling.Action{
			act(dof.ActDIFExpr, i8), act(dof.ActDIFExpr, str), agg(dof.AggCount, 2, 0)},
			ep{Size: 0, Needed: 288, Alignment: 8},
			[]*AggDesc{{ID: 1, EPID: 1, Size: 280, Recs: []Rec{
				{Action: dof.ActDIFExpr, Size: 8, Offset: 8, Alignment: 8},
				{Action: dof.ActDIFExpr, Size: 256, Offset: 16, Alignment: 8},
				{Action: dof.AggCount, Size: 8, Offset: 272, Alignment: 8}}}}},
		{"trace(1) then @[1] = sum(x): an int key aligned to the ID's 4", []enabling.Action{
			act(dof.ActDIFExpr, i4), act(dof.ActDIFExpr, i8), act(dof.ActDIFExpr, i4), act(dof.ActDIFExpr, void), agg(dof.AggSum, 3, 0)},
			ep{Size: 16, Needed: 48, Alignment: 8, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 4, Offset: 12, Alignment: 4}}},
			// The key starts at offset 4 of an 8-byte block, 20, after
			// the ID at 16; the variable's ID (8 bytes) at 24, the key
			// at 32, the sum at 40: 48 bytes needed.
			[]*AggDesc{{ID: 1, EPID: 1, Size: 32, Recs: []Rec{
				{Action: dof.ActDIFExpr, Size: 8, Offset: 8, Alignment: 8},
				{Action: dof.ActDIFExpr, Size: 4, Offset: 16, Alignment: 4},
				{Action: dof.AggSum, Size: 8, Offset: 24, Alignment: 8}}}}},
		{"@a = count(); printa(@a); exit(0): later records reuse the key's room",
			[]enabling.Action{act(dof.ActDIFExpr, i8), agg(dof.AggCount, 1, 0), act(dof.ActPrinta, i8), act(dof.ActExit, i4)},
			ep{Size: 28, Needed: 32, Alignment: 8, Recs: []Rec{
				{Action: dof.ActPrinta, Size: 8, Offset: 16, Alignment: 8},
				{Action: dof.ActExit, Size: 4, Offset: 24, Alignment: 4}}},
			[]*AggDesc{{ID: 1, EPID: 1, Size: 24, Recs: []Rec{
				{Action: dof.ActDIFExpr, Size: 8, Offset: 8, Alignment: 8},
				{Action: dof.AggCount, Size: 8, Offset: 16, Alignment: 8}}}}},
		{"avg, stddev and quantizations", []enabling.Action{
			act(dof.ActDIFExpr, i8), agg(dof.AggAvg, 1, 0),
			act(dof.ActDIFExpr, i8), agg(dof.AggStddev, 1, 0),
			act(dof.ActDIFExpr, i8), agg(dof.AggQuantize, 1, 0),
			act(dof.ActDIFExpr, i8), agg(dof.AggLQuantize, 1, dof.LQuantizeArg(0, 10, 10)),
			act(dof.ActDIFExpr, i8), agg(dof.AggLLQuantize, 1, dof.LLQuantizeArg(10, 0, 6, 20))},
			ep{Size: 0, Needed: 1040, Alignment: 8},
			[]*AggDesc{
				{ID: 1, EPID: 1, Size: 32, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 8, Offset: 8, Alignment: 8}, {Action: dof.AggAvg, Size: 16, Offset: 16, Alignment: 8}}},
				{ID: 2, EPID: 1, Size: 48, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 8, Offset: 8, Alignment: 8}, {Action: dof.AggStddev, Size: 32, Offset: 16, Alignment: 8}}},
				{ID: 3, EPID: 1, Size: 1032, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 8, Offset: 8, Alignment: 8}, {Action: dof.AggQuantize, Size: 1016, Offset: 16, Alignment: 8}}},
				{ID: 4, EPID: 1, Size: 120, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 8, Offset: 8, Alignment: 8}, {Action: dof.AggLQuantize, Size: 104, Offset: 16, Alignment: 8, Arg: dof.LQuantizeArg(0, 10, 10)}}},
				// One bucket under 10^0, 9 for 1 to 9, 18 for each of
				// the 6 orders above, plus 2: 120.
				{ID: 5, EPID: 1, Size: 976, Recs: []Rec{{Action: dof.ActDIFExpr, Size: 8, Offset: 8, Alignment: 8}, {Action: dof.AggLLQuantize, Size: 960, Offset: 16, Alignment: 8, Arg: dof.LLQuantizeArg(10, 0, 6, 20)}}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := DefaultOptions
			opt.StrSize = 32
			l := NewLayout(opt)
			eps, err := l.Add(&enabling.ECB{Actions: tt.acts}, []Probe{{ID: ProbeBegin, Provider: "dtrace", Name: "BEGIN"}})
			if err != nil {
				t.Fatal(err)
			}
			e := eps[0]
			got := ep{Size: e.Size, Needed: e.Needed, Alignment: e.Alignment, Recs: e.Recs}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("layout (-want +got):\n%s", diff)
			}
			var aggs []*AggDesc
			for id := uint32(1); ; id++ {
				a, err := l.Agg(id)
				if err != nil {
					break
				}
				aggs = append(aggs, a)
			}
			if diff := cmp.Diff(tt.aggs, aggs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("aggregations (-want +got):\n%s", diff)
			}
		})
	}
}
