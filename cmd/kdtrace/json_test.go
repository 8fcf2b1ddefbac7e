package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestJSONOptions checks the ways to ask for JSON: -O alone or with a
// style (-O json, -Ojson), --libxo json and --libxo=json; and that a
// style kdtrace does not write is refused.
func TestJSONOptions(t *testing.T) {
	tests := []struct {
		args     []string
		opts     []opt
		operands []string
	}{
		{[]string{"-O", "-n", "BEGIN"}, []opt{{"O", ""}, {"n", "BEGIN"}}, nil},
		{[]string{"-O", "json", "-n", "BEGIN"}, []opt{{"O", "json"}, {"n", "BEGIN"}}, nil},
		{[]string{"-Ojson", "-n", "BEGIN"}, []opt{{"O", "json"}, {"n", "BEGIN"}}, nil},
		{[]string{"-Oqn", "BEGIN"}, []opt{{"O", ""}, {"q", ""}, {"n", "BEGIN"}}, nil},
		{[]string{"-O", "-s", "x.d", "json"}, []opt{{"O", ""}, {"s", "x.d"}}, []string{"json"}},
		{[]string{"--libxo", "json", "-n", "BEGIN"}, []opt{{"libxo", "json"}, {"n", "BEGIN"}}, nil},
		{[]string{"--libxo=json", "-n", "BEGIN"}, []opt{{"libxo", "json"}, {"n", "BEGIN"}}, nil},
	}
	for _, tt := range tests {
		opts, operands, err := getopt(tt.args)
		if err != nil {
			t.Errorf("getopt(%q): %v", tt.args, err)
			continue
		}
		if diff := cmp.Diff(tt.opts, opts, cmp.AllowUnexported(opt{})); diff != "" {
			t.Errorf("getopt(%q) options (-want +got):\n%s", tt.args, diff)
		}
		if diff := cmp.Diff(tt.operands, operands); diff != "" {
			t.Errorf("getopt(%q) operands (-want +got):\n%s", tt.args, diff)
		}
	}
	for _, tt := range []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"-O", "json", "-e", "-n", "BEGIN"}, 0, ""},
		{[]string{"--libxo", "json", "-e", "-n", "BEGIN"}, 0, ""},
		{[]string{"-x", "oformat=json", "-e", "-n", "BEGIN"}, 0, ""},
		{[]string{"-O", "xml", "-e", "-n", "BEGIN"}, 2, "kdtrace: -O xml: only json is supported\n"},
		{[]string{"--libxo=html", "-e", "-n", "BEGIN"}, 2, "kdtrace: --libxo html: only json is supported\n"},
		{[]string{"-x", "oformat=yaml", "-e", "-n", "BEGIN"}, 1, "kdtrace: failed to set -x oformat: Invalid value for specified option\n"},
	} {
		var stdout, stderr bytes.Buffer
		st := run(append([]string{"kdtrace"}, tt.args...), &stdout, &stderr)
		if st != tt.status || stderr.String() != tt.stderr || stdout.Len() != 0 {
			t.Errorf("kdtrace %q: status %d, stdout %q, stderr %q; want %d, \"\", %q", tt.args, st, stdout.String(), stderr.String(), tt.status, tt.stderr)
		}
	}
}

// decodeJSON decodes each line of out as one JSON object of the
// schema's version, numbers kept exact.
func decodeJSON(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		d := json.NewDecoder(strings.NewReader(sc.Text()))
		d.UseNumber()
		var o map[string]any
		if err := d.Decode(&o); err != nil || d.More() {
			t.Fatalf("line %q is not one JSON object (%v)", sc.Text(), err)
		}
		if o["version"] != json.Number("1") {
			t.Fatalf("line %q: version %v, want 1", sc.Text(), o["version"])
		}
		objs = append(objs, o)
	}
	return objs
}

// TestJSONTrace traces BEGIN, a timer and END with -O json and decodes
// what kdtrace prints.
func TestJSONTrace(t *testing.T) {
	needTracing(t)
	before := loadedPrograms(t)
	var stdout, stderr bytes.Buffer
	st := run([]string{"kdtrace", "-O", "json", "-n", `BEGIN { trace(1); trace("two"); printf("%s=%d\n", "x", 3); } BEGIN { @c["k"] = count(); @q = quantize(5); }
		tick-10ms /i++ == 3/ { trace(i); exit(2); } END { @c["end"] = count(); trace("bye"); }`}, &stdout, &stderr)
	if st != 2 {
		t.Errorf("status %d, want 2 (stderr %q)", st, stderr.String())
	}
	objs := decodeJSON(t, stdout.String())
	var types []string
	for _, o := range objs {
		types = append(types, o["type"].(string))
	}
	if diff := cmp.Diff([]string{"probe", "probe", "probe", "aggregation", "aggregation"}, types); diff != "" {
		t.Fatalf("objects (-want +got):\n%s\n%s", diff, stdout.String())
	}
	num := func(s string) json.Number { return json.Number(s) }
	begin, tick, end := objs[0], objs[1], objs[2]
	if diff := cmp.Diff(map[string]any{"id": num("1"), "provider": "dtrace", "module": "", "function": "", "name": "BEGIN"}, begin["probe"]); diff != "" {
		t.Errorf("BEGIN's probe (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{
		map[string]any{"action": "trace", "value": num("1")},
		map[string]any{"action": "trace", "value": "two"},
		map[string]any{"action": "printf", "format": "%s=%i\n", "output": "x=3\n", "args": []any{"x", num("3")}},
	}, begin["records"]); diff != "" {
		t.Errorf("BEGIN's records (-want +got):\n%s", diff)
	}
	if p := tick["probe"].(map[string]any); p["provider"] != "profile" || p["name"] != "tick-10ms" {
		t.Errorf("tick's probe %v", p)
	}
	if diff := cmp.Diff([]any{
		map[string]any{"action": "trace", "value": num("4")},
		map[string]any{"action": "exit", "status": num("2")},
	}, tick["records"]); diff != "" {
		t.Errorf("tick's records (-want +got):\n%s", diff)
	}
	for _, o := range []map[string]any{begin, tick} {
		if _, err := o["timestamp"].(json.Number).Int64(); err != nil {
			t.Errorf("timestamp %v", o["timestamp"])
		}
	}
	if end["probe"].(map[string]any)["name"] != "END" {
		t.Errorf("third firing %v, want END's", end)
	}
	want := []map[string]any{
		{"version": num("1"), "type": "aggregation", "id": num("1"), "name": "@c", "function": "count", "entries": []any{
			map[string]any{"keys": []any{"end"}, "value": num("1")},
			map[string]any{"keys": []any{"k"}, "value": num("1")},
		}},
		{"version": num("1"), "type": "aggregation", "id": num("2"), "name": "@q", "function": "quantize", "entries": []any{
			map[string]any{"keys": []any{}, "buckets": []any{map[string]any{"min": num("4"), "max": num("7"), "count": num("1")}}},
		}},
	}
	if diff := cmp.Diff(want, objs[3:]); diff != "" {
		t.Errorf("aggregations (-want +got):\n%s", diff)
	}
	checkReleased(t, before)
}

// TestJSONSyscalls traces this process's getppid calls with -O json:
// one object per call, none lost, the count aggregated the same.
func TestJSONSyscalls(t *testing.T) {
	needTracing(t)
	const n = 2000
	before := loadedPrograms(t)
	prog := fmt.Sprintf(`BEGIN { trace("go"); } syscall::getppid:entry /pid == %d/ { trace(probefunc); @n = count(); }`, os.Getpid())
	pr, pw := io.Pipe()
	done := make(chan int)
	var errs strings.Builder
	go func() {
		done <- run([]string{"kdtrace", "--libxo=json", "-n", prog}, pw, &errs)
		pw.Close()
	}()
	var out strings.Builder
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		first := true
		for sc.Scan() {
			fmt.Fprintln(&out, sc.Text())
			if first {
				// BEGIN's firing: the tracing is active.
				first = false
				for range n {
					syscall.Getppid()
				}
				syscall.Kill(os.Getpid(), syscall.SIGINT)
			}
		}
	}()
	select {
	case st := <-done:
		if st != 0 {
			t.Errorf("status %d (stderr %q)", st, errs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("kdtrace did not stop")
	}
	<-read
	objs := decodeJSON(t, out.String())
	calls, aggs := 0, 0
	for _, o := range objs {
		switch o["type"] {
		case "probe":
			p := o["probe"].(map[string]any)
			if p["provider"] != "syscall" {
				continue
			}
			calls++
			if p["function"] != "getppid" || p["name"] != "entry" {
				t.Fatalf("firing of %v", p)
			}
			if diff := cmp.Diff([]any{map[string]any{"action": "trace", "value": "getppid"}}, o["records"]); diff != "" {
				t.Fatalf("records (-want +got):\n%s", diff)
			}
		case "aggregation":
			aggs++
			e := o["entries"].([]any)
			if o["name"] != "@n" || len(e) != 1 || e[0].(map[string]any)["value"] != json.Number(fmt.Sprint(n)) {
				t.Errorf("aggregation %v, want @n of %d", o, n)
			}
		default:
			t.Errorf("object %v", o)
		}
	}
	if calls != n || aggs != 1 {
		t.Errorf("%d syscall firings and %d aggregations, want %d and 1", calls, aggs, n)
	}
	checkReleased(t, before)
}
