package consumer_test

import (
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/record"
)

// syscallBuffer compiles a clause for syscall:::entry and returns the
// describer and one CPU's buffer of n firings of it, as the kernel
// writes them: integers counting up from 1000, strings taken in turn
// from names.
func syscallBuffer(tb testing.TB, src string, n int) (record.Describer, []byte) {
	tb.Helper()
	p, err := compile("bench.d", []byte(src), &parser.Config{}, false)
	if err != nil {
		tb.Fatal(err)
	}
	l := record.NewLayout(record.OptionsOf(p.prog))
	probe := record.Probe{ID: 412, Provider: "syscall", Function: "write", Name: "entry"}
	eps, err := l.Add(&p.prog.ECBs[0], []record.Probe{probe})
	if err != nil {
		tb.Fatal(err)
	}
	ep := eps[0]
	names := []string{"dd", "kdtrace", "systemd-journal", "sshd"}
	buf := record.NewBuffer(n * int(ep.Needed+8))
	vals := make([]record.Value, len(ep.Actions))
	for i := range n {
		for k, a := range ep.Actions {
			if a.Type.Kind == dif.TypeString {
				vals[k] = record.Value{Ref: []byte(names[i%len(names)])}
			} else {
				vals[k] = record.Value{Int: uint64(1000 + i)}
			}
		}
		if ok, err := buf.Write(ep, uint64(i), vals); !ok || err != nil {
			tb.Fatalf("firing %d: recorded %v, %v", i, ok, err)
		}
	}
	return l, buf.Bytes()
}

// BenchmarkFirings measures the consumer alone, from one CPU's buffer
// of records in memory to io.Discard, in firings a second: the
// everyday one-liners, in text and JSON. What the kernel and the ring
// buffer add is bench/flood.sh's to measure.
func BenchmarkFirings(b *testing.B) {
	const n = 100000
	for _, bc := range []struct {
		name   string
		src    string
		quiet  bool
		format consumer.Format
	}{
		{"printf", `syscall:::entry { printf("%d %s\n", pid, execname); }`, true, consumer.Text},
		{"trace", `syscall:::entry { trace(arg0); }`, false, consumer.Text},
		{"printf-json", `syscall:::entry { printf("%d %s\n", pid, execname); }`, true, consumer.JSON},
		{"trace-json", `syscall:::entry { trace(arg0); }`, false, consumer.JSON},
	} {
		desc, data := syscallBuffer(b, bc.src, n)
		b.Run(bc.name, func(b *testing.B) {
			c := consumer.New(desc, consumer.Config{Out: io.Discard, Quiet: bc.quiet, Format: bc.format})
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Consume(0, data, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "firings/s")
			b.ReportMetric(float64(testing.AllocsPerRun(1, func() { c.Consume(0, data, 0) }))/n, "allocs/firing")
		})
	}
}

// TestFiringsAllocateNothing checks that the everyday one-liners'
// firings cost the consumer no allocation: a buffer of a thousand
// firings is printed with a handful at most, whatever its length.
func TestFiringsAllocateNothing(t *testing.T) {
	const n = 1000
	for _, tc := range []struct {
		src    string
		quiet  bool
		format consumer.Format
	}{
		{`syscall:::entry { printf("%d %s\n", pid, execname); }`, true, consumer.Text},
		{`syscall:::entry { printf("%5d|%-16s|%x\n", pid, execname, arg0); }`, false, consumer.Text},
		{`syscall:::entry { trace(arg0); }`, false, consumer.Text},
		{`syscall:::entry { trace(arg0); }`, true, consumer.Text},
		{`syscall:::entry { printf("%d %s\n", pid, execname); }`, true, consumer.JSON},
		{`syscall:::entry { trace(arg0); }`, false, consumer.JSON},
	} {
		desc, data := syscallBuffer(t, tc.src, n)
		c := consumer.New(desc, consumer.Config{Out: io.Discard, Quiet: tc.quiet, Format: tc.format})
		if err := c.Consume(0, data, 0); err != nil {
			t.Fatal(err)
		}
		if allocs := testing.AllocsPerRun(5, func() { c.Consume(0, data, 0) }); allocs > 10 {
			t.Errorf("%s (%v, quiet %v): %.0f allocations for %d firings", tc.src, tc.format, tc.quiet, allocs, n)
		}
	}
}

// TestConsumeUpToBadEPID checks that a buffer is printed as it is
// walked, as dt_consume_cpu walks it: the firings before an EPID that
// names no enabled probe are printed, and the walk stops there with
// the error.
func TestConsumeUpToBadEPID(t *testing.T) {
	desc, data := syscallBuffer(t, `syscall:::entry { printf("%d %s\n", pid, execname); }`, 3)
	bad := binary.LittleEndian.AppendUint32(append([]byte(nil), data...), 99)
	bad = append(bad, make([]byte, 12)...)
	var out strings.Builder
	c := consumer.New(desc, consumer.Config{Out: &out, Quiet: true})
	err := c.Consume(0, bad, 0)
	var de *record.DecodeError
	if !errors.As(err, &de) || de.Offset != len(data) {
		t.Errorf("error %v, want a record.DecodeError at offset %d", err, len(data))
	}
	if want := "1000 dd\n1001 kdtrace\n1002 systemd-journal\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
}
