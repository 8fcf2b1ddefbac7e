package consumer_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/types"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// FuzzConsume feeds the consumer buffers of any bytes: it must print
// them or fail with an error, never panic.
func FuzzConsume(f *testing.F) {
	l := record.NewLayout(record.DefaultOptions)
	p := record.Probe{ID: record.ProbeBegin, Provider: "dtrace", Name: "BEGIN"}
	// print() of a struct of the shapes dtrace_print prints.
	var tb types.Table
	s := &types.Struct{Name: "s", Bytes: 16}
	s.SetMembers([]types.Member{
		{Name: "c", Type: types.Char}, {Name: "a", Type: &types.Array{Elem: types.Char, Len: 3}, Offset: 8},
		{Name: "b", Type: types.UInt, Offset: 32, BitSize: 5}, {Name: "e", Type: &types.Enum{Name: "e", Bytes: 4, Values: []types.Enumerator{{Name: "A", Value: 1}}}, Offset: 64},
		{Name: "p", Type: &types.Pointer{Elem: &types.Func{Result: types.IntType}}, Offset: 64}})
	byRef16 := dif.Type{Kind: dif.TypeCTF, CtfKind: dif.CTFStruct, Flags: dif.TFByRef, Size: 16}
	for _, acts := range [][]enabling.Action{
		{{Kind: dof.ActDIFExpr, Format: tb.Ref(s), DIFO: &dif.Object{Ret: byRef16}}, {Kind: dof.ActDIFExpr, Format: tb.Ref(types.Char), DIFO: &dif.Object{Ret: i1}}},
		nil,
		{{Kind: dof.ActPrintf, Format: "%d %s %*.*s %c %a %A %k %S %e\n", DIFO: &dif.Object{Ret: i4}}},
		{{Kind: dof.ActPrintf, Format: "%s %p %Y\n", DIFO: &dif.Object{Ret: str}}, {Kind: dof.ActPrintf, Format: "%s %p %Y\n", DIFO: &dif.Object{Ret: i8}}},
		{{Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i1}}, {Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: ws}}, {Kind: dof.ActExit, DIFO: &dif.Object{Ret: i4}}},
		{{Kind: dof.ActStack, Arg: 3}, {Kind: dof.ActUStack, Arg: dof.UStackArg(2, 8)}, {Kind: dof.ActUSym, DIFO: &dif.Object{Ret: i8}}},
		{{Kind: dof.ActTraceMem, DIFO: &dif.Object{Ret: ws}}, {Kind: dof.ActTraceMemDynSize, DIFO: &dif.Object{Ret: i8}}},
		{{Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}}, {Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}}, {Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}}, {Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}}, {Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}}},
	} {
		if _, err := l.Add(&enabling.ECB{Actions: acts}, []record.Probe{p}); err != nil {
			f.Fatal(err)
		}
	}
	// The last ECB as libdtrace's ERROR clause.
	errEPs, _ := l.Add(&enabling.ECB{UArg: dof.ECBError, Actions: []enabling.Action{
		{Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}}, {Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}}, {Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}},
		{Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}}, {Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}}}},
		[]record.Probe{{ID: record.ProbeError, Provider: "dtrace", Name: "ERROR"}})
	for _, ep := range l.EProbes() {
		b := make([]byte, ep.Size+4)
		if ep.Size != 0 {
			record.PutHeader(b[4:], ep.EPID, 7)
		}
		f.Add(b)
	}
	e := make([]byte, errEPs[0].Size)
	record.PutHeader(e, errEPs[0].EPID, 0)
	binary.LittleEndian.PutUint64(e[16:], 2)
	f.Add(e)
	f.Fuzz(func(t *testing.T, data []byte) {
		var out, errs bytes.Buffer
		c := consumer.New(l, consumer.Config{Out: &out, Err: &errs, Symbols: fakeSymbols{}, Types: &tb})
		c.Consume(0, data, 1)
		c.ConsumeRound([]record.CPUBuffer{{CPU: 0, Data: data}, {CPU: 1, Data: data}}, 0, 0)
		// The JSON output, error or not, is whole lines of JSON.
		var jout bytes.Buffer
		j := consumer.New(l, consumer.Config{Out: &jout, Err: &errs, Symbols: fakeSymbols{}, Format: consumer.JSON})
		j.Consume(0, data, 1)
		j.ConsumeRound([]record.CPUBuffer{{CPU: 0, Data: data}, {CPU: 1, Data: data}}, 0, 0)
		for line := range bytes.Lines(jout.Bytes()) {
			if !json.Valid(line) || line[len(line)-1] != '\n' {
				t.Fatalf("not a line of JSON: %q", line)
			}
		}
	})
}
