package consumer_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

func pcs(v ...uint64) []byte {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], x)
	}
	return b
}

// TestSymbols checks the actions that print addresses: sym(), mod(),
// usym(), umod(), uaddr(), stack() and ustack(), each "  %-50s" or one
// frame a line after StackIndent spaces.
func TestSymbols(t *testing.T) {
	pad := func(s string) string { return "  " + s + strings.Repeat(" ", 50-len(s)) }
	frame := func(s string) string { return strings.Repeat(" ", consumer.StackIndent) + s + "\n" }
	tests := []struct {
		name string
		act  enabling.Action
		val  record.Value
		want string
	}{
		{"sym", enabling.Action{Kind: dof.ActSym, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: 0x1010}, pad("kernel`malloc")},
		{"sym in a module", enabling.Action{Kind: dof.ActSym, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: 0x2000}, pad("kernel`0x2000")},
		{"sym unknown", enabling.Action{Kind: dof.ActSym, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: 0x3000}, pad("0x3000")},
		{"mod", enabling.Action{Kind: dof.ActMod, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: 0x1010}, pad("kernel")},
		{"usym drops the offset", enabling.Action{Kind: dof.ActUSym, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: 0x400010, PID: 7}, pad("a.out`main")},
		{"uaddr keeps it", enabling.Action{Kind: dof.ActUAddr, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: 0x400010, PID: 7}, pad("a.out`main+0x10")},
		{"umod", enabling.Action{Kind: dof.ActUMod, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: 0x400010, PID: 7}, pad("a.out")},
		{"umod unknown", enabling.Action{Kind: dof.ActUMod, DIFO: &dif.Object{Ret: i8}}, record.Value{Int: 0x400010, PID: 8}, pad("0x400010")},
		{"stack to its first zero", enabling.Action{Kind: dof.ActStack, Arg: 4}, record.Value{Ref: pcs(0x1000, 0x1020, 0x9)},
			"\n" + frame("kernel`malloc") + frame("kernel`malloc+0x20") + frame("0x9")},
		{"ustack with the pid first", enabling.Action{Kind: dof.ActUStack, Arg: dof.UStackArg(3, 0)}, record.Value{Ref: pcs(7, 0x400000, 0x400008)},
			"\n" + frame("a.out`main") + frame("a.out`main+0x8")},
	}
	for _, tt := range tests {
		l := record.NewLayout(record.DefaultOptions)
		eps, err := l.Add(&enabling.ECB{Actions: []enabling.Action{tt.act}}, []record.Probe{{ID: 1, Provider: "dtrace", Name: "BEGIN"}})
		if err != nil {
			t.Fatal(err)
		}
		b := record.NewBuffer(1024)
		if _, err := b.Write(eps[0], 0, []record.Value{tt.val}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		c := consumer.New(l, consumer.Config{Out: &out, Quiet: true, Symbols: fakeSymbols{}})
		if err := c.Consume(0, b.Bytes(), 0); err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, out.String()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestDrops(t *testing.T) {
	l := record.NewLayout(record.DefaultOptions)
	l.Add(&enabling.ECB{}, []record.Probe{{ID: 1, Provider: "dtrace", Name: "BEGIN"}})
	var out, errs bytes.Buffer
	c := consumer.New(l, consumer.Config{Out: &out, Err: &errs, ProgName: "kdtrace", Quiet: true})
	if err := c.Consume(3, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Consume(0, nil, 12); err != nil {
		t.Fatal(err)
	}
	if want := "kdtrace: 1 drop on CPU 3\nkdtrace: 12 drops on CPU 0\n"; errs.String() != want {
		t.Errorf("drops reported as %q, want %q", errs.String(), want)
	}
	if err := c.Consume(0, []byte{5, 0, 0, 0}, 0); err == nil {
		t.Error("a buffer naming an unknown EPID was consumed")
	}
}
