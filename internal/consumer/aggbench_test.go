package consumer_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/kdtrace/kdtrace/dif/vm"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/record"
)

// bigAggregation returns the describer and one CPU's aggregation buffer
// of `@[arg0] = count()` after n firings with arg0 from 0 to n-1: n keys.
func bigAggregation(tb testing.TB, n int) (record.Describer, []byte) {
	tb.Helper()
	p, err := compile("big.d", []byte(`BEGIN { @[arg0] = count(); }`), &parser.Config{}, false)
	if err != nil {
		tb.Fatal(err)
	}
	l := record.NewLayout(record.OptionsOf(p.prog))
	eps, err := l.Add(&p.prog.ECBs[0], []record.Probe{dtraceProbes[0]})
	if err != nil {
		tb.Fatal(err)
	}
	ep := eps[0]
	m := vm.New(&vm.Config{StrSize: 256})
	b := record.NewAggBuffer(64 * n)
	for key := range n {
		ctx := &vm.Context{Args: []uint64{uint64(key)}}
		m.BeginFiring()
		m.BeginClause()
		vals := make([]record.Value, len(ep.Actions))
		for i, a := range p.prog.ECBs[0].Actions {
			if a.DIFO != nil {
				v, err := m.Run(a.DIFO, ctx)
				if err != nil {
					tb.Fatal(err)
				}
				vals[i].Int = v
			}
			if a.Kind.IsAgg() {
				if err := b.Aggregate(ep, i, vals); err != nil {
					tb.Fatal(err)
				}
			}
		}
	}
	if b.Drops() != 0 {
		tb.Fatalf("%d aggregation drops", b.Drops())
	}
	return l, b.Bytes()
}

// TestPrintBigAggregation checks the exit's printing of an aggregation
// of many keys, all of one count: every key once, ordered by key.
func TestPrintBigAggregation(t *testing.T) {
	const n = 5000
	desc, buf := bigAggregation(t, n)
	var out bytes.Buffer
	c := consumer.New(desc, consumer.Config{Out: &out, Quiet: true})
	if err := c.Aggregate(0, buf, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Finish(); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	want.WriteString("\n")
	for key := range n {
		fmt.Fprintf(&want, " %16d %16d\n", key, 1)
	}
	if out.String() != want.String() {
		t.Errorf("got %d bytes, want %d:\n%.400s", out.Len(), want.Len(), out.String())
	}
}

// BenchmarkPrintAggregation100k is what kdtrace does at exit with an
// aggregation of 100,000 keys (bench/aggprint.sh, less the kernel's
// part): take the snapshot into the consumer, sort and print it.
func BenchmarkPrintAggregation100k(b *testing.B) {
	desc, buf := bigAggregation(b, 100000)
	b.ResetTimer()
	for range b.N {
		c := consumer.New(desc, consumer.Config{Out: io.Discard, Quiet: true})
		if err := c.Aggregate(0, buf, 0); err != nil {
			b.Fatal(err)
		}
		if err := c.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}
