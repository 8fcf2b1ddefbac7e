package consumer_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// TestFlowindent checks -F's lines against dt_flowindent and dtrace(1)'s
// chew: "%3d %-41s " with the function after the indentation and an
// arrow, or "| function:name" for other probes and for a second ECB of
// the probe that just indented.
func TestFlowindent(t *testing.T) {
	l := record.NewLayout(record.DefaultOptions)
	eps := map[string]*record.EProbe{}
	for _, p := range []record.Probe{
		{ID: 10, Provider: "fbt", Module: "kernel", Function: "foo", Name: "entry"},
		{ID: 11, Provider: "fbt", Module: "kernel", Function: "bar", Name: "entry"},
		{ID: 12, Provider: "fbt", Module: "kernel", Function: "bar", Name: "return"},
		{ID: 13, Provider: "fbt", Module: "kernel", Function: "foo", Name: "return"},
		{ID: 20, Provider: "syscall", Function: "read", Name: "entry"},
		{ID: 21, Provider: "syscall", Function: "read", Name: "return"},
		{ID: 30, Provider: "profile", Name: "tick-1"},
		{ID: 40, Provider: "pid42", Module: "a.out", Function: "f", Name: "gentry"},
		{ID: 41, Provider: "usdt", Function: "g", Name: "method-entry"},
	} {
		got, err := l.Add(&enabling.ECB{}, []record.Probe{p})
		if err != nil {
			t.Fatal(err)
		}
		eps[p.Function+":"+p.Name] = got[0]
	}
	// A second ECB of foo:entry.
	again, _ := l.Add(&enabling.ECB{}, []record.Probe{{ID: 10, Provider: "fbt", Module: "kernel", Function: "foo", Name: "entry"}})
	b := record.NewBuffer(4096)
	for _, ep := range []*record.EProbe{
		eps["foo:entry"], again[0], eps["bar:entry"], eps[":tick-1"], eps["bar:return"], eps["foo:return"],
		eps["read:entry"], eps["f:gentry"], eps["g:method-entry"], eps["read:return"],
	} {
		if _, err := b.Write(ep, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	line := func(s string) string { return "  0 " + s + strings.Repeat(" ", 41-len(s)) + " \n" }
	want := "CPU FUNCTION" + strings.Repeat(" ", 33) + "\n" +
		line(" -> foo") +
		line("  | foo:entry") +
		line("   -> bar") +
		line("    | :tick-1") +
		line("   <- bar") +
		line(" <- foo") +
		line(" => read") +
		line("  | f:gentry") +
		line("   -> g") +
		line("   <= read")
	var out bytes.Buffer
	c := consumer.New(l, consumer.Config{Out: &out, Flowindent: true})
	if err := c.Consume(0, b.Bytes(), 0); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("-F output (-want +got):\n%s", diff)
	}
}
