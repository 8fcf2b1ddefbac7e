package consumer_test

import (
	"bytes"
	"testing"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// TestConsumeRound checks the order in which a round of buffers is
// printed: BEGIN's records first, END's last, the rest CPU by CPU.
func TestConsumeRound(t *testing.T) {
	l := record.NewLayout(record.DefaultOptions)
	probes := []record.Probe{
		{ID: record.ProbeBegin, Provider: "dtrace", Name: "BEGIN"},
		{ID: record.ProbeEnd, Provider: "dtrace", Name: "END"},
		{ID: 4, Provider: "profile", Name: "tick-1"},
	}
	eps := map[string]*record.EProbe{}
	for _, p := range probes {
		// printf("%s ", "<name>")
		got, err := l.Add(&enabling.ECB{Actions: []enabling.Action{{Kind: dof.ActPrintf, Format: "%s ", DIFO: &dif.Object{Ret: dif.StringType(8)}}}}, []record.Probe{p})
		if err != nil {
			t.Fatal(err)
		}
		eps[p.Name] = got[0]
	}
	buf := func(names ...string) []byte {
		b := record.NewBuffer(1024)
		for _, n := range names {
			if _, err := b.Write(eps[n], 0, []record.Value{{Ref: []byte(n)}}); err != nil {
				t.Fatal(err)
			}
		}
		return b.Bytes()
	}
	tests := []struct {
		name             string
		bufs             []record.CPUBuffer
		beganOn, endedOn int
		want             string
	}{
		{"BEGIN's CPU first", []record.CPUBuffer{{CPU: 0, Data: buf("tick-1")}, {CPU: 1, Data: buf("BEGIN", "tick-1")}}, 1, -1,
			"BEGIN tick-1 tick-1 "},
		{"END's CPU last", []record.CPUBuffer{{CPU: 0, Data: buf("tick-1", "END")}, {CPU: 1, Data: buf("tick-1")}}, -1, 0,
			"tick-1 tick-1 END "},
		{"BEGIN and END on one CPU: read twice", []record.CPUBuffer{{CPU: 0, Data: buf("BEGIN", "tick-1", "END")}, {CPU: 1, Data: buf("tick-1")}}, 0, 0,
			"BEGIN tick-1 tick-1 END "},
		{"CPUs in order", []record.CPUBuffer{{CPU: 2, Data: buf("END")}, {CPU: 1, Data: buf("BEGIN")}}, -1, -1,
			"BEGIN END "},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		c := consumer.New(l, consumer.Config{Out: &out, Quiet: true})
		if err := c.ConsumeRound(tt.bufs, tt.beganOn, tt.endedOn); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if out.String() != tt.want {
			t.Errorf("%s: printed %q, want %q", tt.name, out.String(), tt.want)
		}
	}
	c := consumer.New(l, consumer.Config{Out: &bytes.Buffer{}})
	if err := c.ConsumeRound([]record.CPUBuffer{{CPU: 1}, {CPU: 1}}, -1, -1); err == nil {
		t.Error("two buffers of one CPU were consumed")
	}
}
