package consumer_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/record"
)

// TestAggregateCPUs checks that the consumer merges what each CPU's
// aggregation buffer holds, key by key, with each function's rule, and
// keeps the sum across snapshots: the runtime snapshots every CPU at
// each aggrate tick and empties their buffers.
func TestAggregateCPUs(t *testing.T) {
	p, err := compile("cpus.d", []byte(`
BEGIN { @s[arg1] = sum(arg0); @lo[arg1] = min(arg0); @hi[arg1] = max(arg0); @a = avg(arg0); @d = stddev(arg0); @q = quantize(arg0); }
`), &parser.Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	l := record.NewLayout(record.OptionsOf(p.prog))
	eps, err := l.Add(&p.prog.ECBs[0], []record.Probe{dtraceProbes[0]})
	if err != nil {
		t.Fatal(err)
	}
	ep := eps[0]
	var out bytes.Buffer
	c := consumer.New(l, consumer.Config{Out: &out, Quiet: true})
	m := vm.New(&vm.Config{StrSize: 256})
	// fire runs the clause on a CPU with arg0 and the key arg1.
	fire := func(b *record.AggBuffer, arg0, key uint64) {
		t.Helper()
		ctx := &vm.Context{Args: []uint64{arg0, key}}
		m.BeginFiring()
		m.BeginClause()
		vals := make([]record.Value, len(ep.Actions))
		for i, a := range p.prog.ECBs[0].Actions {
			if a.DIFO != nil {
				v, err := m.Run(a.DIFO, ctx)
				if err != nil {
					t.Fatal(err)
				}
				vals[i].Int = v
			}
			if a.Kind.IsAgg() {
				if err := b.Aggregate(ep, i, vals); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	cpu0, cpu1 := record.NewAggBuffer(1<<16), record.NewAggBuffer(1<<16)
	snap := func() {
		t.Helper()
		for cpu, b := range []*record.AggBuffer{cpu0, cpu1} {
			if err := c.Aggregate(cpu, b.Bytes(), b.Drops()); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	fire(cpu0, 10, 1)
	fire(cpu1, 30, 1)
	fire(cpu1, 2, 2)
	snap()
	fire(cpu0, 4, 2)
	fire(cpu1, 50, 1)
	snap()
	if err := c.Finish(); err != nil {
		t.Fatal(err)
	}
	// @s[1] = 10+30+50, @s[2] = 2+4; the values sort each variable's
	// entries; avg is 96/5, stddev the root of the mean of squares
	// 3520/5 less the mean 19 squared.
	want := "\n" +
		"                2                6\n" +
		"                1               90\n" +
		"                2                2\n" +
		"                1               10\n" +
		"                2                4\n" +
		"                1               50\n" +
		"               19\n" +
		"               18\n" +
		"\n" +
		"           value  ------------- Distribution ------------- count    \n" +
		"               1 |                                         0        \n" +
		"               2 |@@@@@@@@                                 1        \n" +
		"               4 |@@@@@@@@                                 1        \n" +
		"               8 |@@@@@@@@                                 1        \n" +
		"              16 |@@@@@@@@                                 1        \n" +
		"              32 |@@@@@@@@                                 1        \n" +
		"              64 |                                         0        \n" +
		"\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestAggregateBad checks that an aggregation buffer that does not hold
// what its descriptions say is refused with an error.
func TestAggregateBad(t *testing.T) {
	p, err := compile("bad.d", []byte(`BEGIN { @[1] = sum(1); }`), &parser.Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	l := record.NewLayout(record.OptionsOf(p.prog))
	if _, err := l.Add(&p.prog.ECBs[0], []record.Probe{dtraceProbes[0]}); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"truncated ID":    {1, 0},
		"unknown ID":      {9, 0, 0, 0, 0, 0, 0, 0},
		"truncated entry": {1, 0, 0, 0, 0, 0, 0, 0},
	} {
		c := consumer.New(l, consumer.Config{Out: &bytes.Buffer{}})
		if err := c.Aggregate(0, b, 0); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
