package consumer_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dif"
	"github.com/kdtrace/kdtrace/dlang/parser"
	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// object is one decoded line of the JSON output, numbers kept exact.
type object = map[string]any

// runJSON runs a D program through the VM with the JSON output and
// decodes every line of it; a line that is not one JSON object with
// the schema's version fails the test.
func runJSON(t *testing.T, src string) ([]object, *run) {
	t.Helper()
	p, err := compile("t.d", []byte("#pragma D option oformat=json\n"+src), &parser.Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	r, err := execute(p)
	if err != nil {
		t.Fatal(err)
	}
	return decodeLines(t, r.out), r
}

func decodeLines(t *testing.T, out string) []object {
	t.Helper()
	var objs []object
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.UseNumber()
		var o object
		if err := d.Decode(&o); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if d.More() {
			t.Fatalf("line %q: more than one value", sc.Text())
		}
		if o["version"] != json.Number("1") {
			t.Fatalf("line %q: version %v, want 1", sc.Text(), o["version"])
		}
		objs = append(objs, o)
	}
	return objs
}

// ofType returns the objects of one type.
func ofType(objs []object, typ string) []object {
	var r []object
	for _, o := range objs {
		if o["type"] == typ {
			r = append(r, o)
		}
	}
	return r
}

// num is a JSON number as the decoder keeps it.
func num(s string) json.Number { return json.Number(s) }

func TestJSONFiring(t *testing.T) {
	objs, r := runJSON(t, `struct s { int a; int b; int c; } x;
		BEGIN {
			trace((char)65); trace((short)-1); trace(-1); trace((long long)-1); trace((unsigned char)200);
			trace("quote\" tab\t nl\n"); trace("esc\033[0m");
			x.a = 1; x.b = 0x41424344; trace(x);
			print((ulong_t)7);
			printf("%d %s %u %x|%5d|%%", -3, "str", 7, 255, 12);
			exit(4);
		}`)
	if r.status != 4 {
		t.Errorf("exit status %d, want 4", r.status)
	}
	probes := ofType(objs, "probe")
	if len(objs) != 1 || len(probes) != 1 {
		t.Fatalf("%d objects, %d probes; want one firing", len(objs), len(probes))
	}
	f := probes[0]
	if f["cpu"] != num("0") || f["timestamp"] == nil || f["epid"] != num("1") {
		t.Errorf("cpu %v, timestamp %v, epid %v", f["cpu"], f["timestamp"], f["epid"])
	}
	wantProbe := object{"id": num("1"), "provider": "dtrace", "module": "", "function": "", "name": "BEGIN"}
	if diff := cmp.Diff(wantProbe, f["probe"]); diff != "" {
		t.Errorf("probe (-want +got):\n%s", diff)
	}
	want := []any{
		object{"action": "trace", "value": num("65")},
		object{"action": "trace", "value": num("65535")},
		object{"action": "trace", "value": num("-1")},
		object{"action": "trace", "value": num("-1")},
		object{"action": "trace", "value": num("200")},
		object{"action": "trace", "value": "quote\" tab\t nl\n"},
		// Not printable, but a string: its type says so.
		object{"action": "trace", "value": "esc\x1b[0m"},
		object{"action": "trace", "value": object{"bytes": "010000004443424100000000"}},
		object{"action": "print", "type": "ulong_t", "value": num("7")},
		object{"action": "printf", "format": "%i %s %u %x|%5i|%%", "output": "-3 str 7 ff|   12|%",
			"args": []any{num("-3"), "str", num("7"), num("255"), num("12")}},
		object{"action": "exit", "status": num("4")},
	}
	if diff := cmp.Diff(want, f["records"]); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestJSONAggregations(t *testing.T) {
	objs, _ := runJSON(t, `
		BEGIN {
			@c["a"] = count(); @c["b"] = count(); @c["b"] = count(); @c["\033"] = count();
			@s[1, "k"] = sum(10); @s[1, "k"] = sum(-3);
			@mn = min(5); @mn = min(-2); @mx = max(5); @mx = max(-2);
			@a = avg(1); @a = avg(4);
			@sd = stddev(2); @sd = stddev(4);
			@q = quantize(0); @q = quantize(1); @q = quantize(5); @q = quantize(-3); @q = quantize(-3);
			@l = lquantize(-1, 0, 10, 5); @l = lquantize(7, 0, 10, 5); @l = lquantize(10, 0, 10, 5);
			@ll = llquantize(0, 10, 0, 2, 10); @ll = llquantize(42, 10, 0, 2, 10); @ll = llquantize(1000, 10, 0, 2, 10);
			exit(0);
		}`)
	// Without the compiler's names, aggregations go by their IDs, in
	// the order the program names them.
	ids := map[string]string{"1": "@c", "2": "@s", "3": "@mn", "4": "@mx", "5": "@a", "6": "@sd", "7": "@q", "8": "@l", "9": "@ll"}
	aggs := map[string]object{}
	for _, o := range ofType(objs, "aggregation") {
		aggs[ids[o["id"].(json.Number).String()]] = o
	}
	type entry = object
	bucket := func(lo, hi int64, count string) object {
		return object{"min": json.Number(itoa64(lo)), "max": json.Number(itoa64(hi)), "count": num(count)}
	}
	tests := []struct {
		name, fn string
		entries  []any
	}{
		{"@c", "count", []any{entry{"keys": []any{"\x1b"}, "value": num("1")}, entry{"keys": []any{"a"}, "value": num("1")}, entry{"keys": []any{"b"}, "value": num("2")}}},
		{"@s", "sum", []any{entry{"keys": []any{num("1"), "k"}, "value": num("7")}}},
		{"@mn", "min", []any{entry{"keys": []any{}, "value": num("-2")}}},
		{"@mx", "max", []any{entry{"keys": []any{}, "value": num("5")}}},
		{"@a", "avg", []any{entry{"keys": []any{}, "value": num("2"), "count": num("2"), "sum": num("5")}}},
		{"@sd", "stddev", []any{entry{"keys": []any{}, "value": num("1"), "count": num("2"), "sum": num("6")}}},
		{"@q", "quantize", []any{entry{"keys": []any{}, "buckets": []any{
			bucket(-3, -2, "2"), bucket(0, 0, "1"), bucket(1, 1, "1"), bucket(4, 7, "1")}}}},
		{"@l", "lquantize", []any{entry{"keys": []any{}, "buckets": []any{
			bucket(math.MinInt64, -1, "1"), bucket(5, 9, "1"), bucket(10, math.MaxInt64, "1")}}}},
		{"@ll", "llquantize", []any{entry{"keys": []any{}, "buckets": []any{
			bucket(math.MinInt64, 0, "1"), bucket(40, 49, "1"), bucket(1000, math.MaxInt64, "1")}}}},
	}
	for _, tt := range tests {
		a, ok := aggs[tt.name]
		if !ok {
			t.Errorf("no aggregation %s in %v", tt.name, objs)
			continue
		}
		if a["function"] != tt.fn {
			t.Errorf("%s: function %v, want %s", tt.name, a["function"], tt.fn)
		}
		if diff := cmp.Diff(tt.entries, a["entries"]); diff != "" {
			t.Errorf("%s: entries (-want +got):\n%s", tt.name, diff)
		}
	}
	if len(aggs) != len(tests) {
		t.Errorf("%d aggregations, want %d", len(aggs), len(tests))
	}
}

func itoa64(v int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestJSONPrinta checks that printa() writes its aggregations after
// the firing that prints them, and that the end of tracing writes only
// those printa() has not printed, as dtrace prints them.
func TestJSONPrinta(t *testing.T) {
	objs, _ := runJSON(t, `
		BEGIN { @x[1] = count(); @y = sum(3); printa(@x); printa("%d %@d\n", @x); }
		BEGIN { exit(0); }`)
	var types []string
	for _, o := range objs {
		types = append(types, o["type"].(string))
	}
	want := []string{"probe", "aggregation", "aggregation", "probe", "aggregation"}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Fatalf("objects (-want +got):\n%s", diff)
	}
	recs := objs[0]["records"].([]any)
	wantRecs := []any{
		object{"action": "printa", "aggregations": []any{num("1")}},
		object{"action": "printa", "format": "%i %@llu\n", "aggregations": []any{num("1")}},
	}
	if diff := cmp.Diff(wantRecs, recs); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	for i, id := range map[int]string{1: "1", 2: "1", 4: "2"} {
		if objs[i]["id"] != num(id) {
			t.Errorf("object %d is aggregation %v, want %s", i, objs[i]["id"], id)
		}
	}
}

// TestJSONTicks counts the firings of a timer: one object each, and
// one for the clause that exits.
func TestJSONTicks(t *testing.T) {
	objs, _ := runJSON(t, `tick-1ms { trace(i++); } tick-1ms /i == 500/ { exit(0); }`)
	probes := ofType(objs, "probe")
	if len(probes) != 501 {
		t.Fatalf("%d firings, want 501", len(probes))
	}
	if probes[500]["records"].([]any)[0].(object)["action"] != "exit" {
		t.Errorf("last firing %v, want the exit()", probes[500])
	}
	for k, p := range probes[:500] {
		v := p["records"].([]any)[0].(object)["value"]
		if v != json.Number(itoa64(int64(k))) {
			t.Fatalf("firing %d traced %v", k, v)
		}
	}
}

func TestJSONError(t *testing.T) {
	objs, r := runJSON(t, `BEGIN { trace(*(int *)0); } BEGIN { x = 0; y = 1 / x; } BEGIN { exit(0); }`)
	errs := ofType(objs, "error")
	if len(errs) != 2 {
		t.Fatalf("%d errors in %v, want 2", len(errs), objs)
	}
	if errs[0]["fault"] != "invalid address" || errs[0]["address"] != "0x0" || errs[0]["action"] != num("1") || errs[0]["epid"] != num("1") {
		t.Errorf("first error: %v", errs[0])
	}
	if errs[1]["fault"] != "divide-by-zero" || errs[1]["address"] != nil || errs[1]["epid"] != num("2") {
		t.Errorf("second error: %v", errs[1])
	}
	p := errs[0]["probe"].(object)
	if p["provider"] != "dtrace" || p["name"] != "BEGIN" {
		t.Errorf("probe %v", p)
	}
	// dtrace's messages still go to the error output.
	msg := errs[0]["message"].(string)
	if !strings.HasPrefix(msg, "kdtrace: error on enabled probe ID 1 (ID 1: dtrace:::BEGIN): invalid address (0x0) in action #1") ||
		!strings.Contains(r.errs, msg+"\n") {
		t.Errorf("message %q; errors:\n%s", msg, r.errs)
	}
}

func TestJSONDrop(t *testing.T) {
	var out, errs bytes.Buffer
	c := consumer.New(nil, consumer.Config{Out: &out, Err: &errs, ProgName: "kdtrace", Format: consumer.JSON})
	for _, d := range []consumer.Drop{
		{Kind: consumer.DropPrincipal, CPU: 1, Count: 3},
		{Kind: consumer.DropDynamic, CPU: -1, Count: 1},
		{Kind: consumer.DropAggregation, CPU: 0, Count: 0}, // nothing to report
	} {
		if err := c.ReportDrop(d); err != nil {
			t.Fatal(err)
		}
	}
	objs := decodeLines(t, out.String())
	want := []object{
		{"version": num("1"), "type": "drop", "kind": "principal", "cpu": num("1"), "count": num("3"), "message": "kdtrace: 3 drops on CPU 1"},
		{"version": num("1"), "type": "drop", "kind": "dynamic", "count": num("1"), "message": "kdtrace: 1 dynamic variable drop"},
	}
	if diff := cmp.Diff(want, objs); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if got := errs.String(); got != "kdtrace: 3 drops on CPU 1\nkdtrace: 1 dynamic variable drop\n" {
		t.Errorf("errors %q", got)
	}
}

// BenchmarkConsume measures the consumer on a buffer of 100,000
// firings of a syscall probe that traces a number and a string, as
// text and as JSON: what it takes to keep up with a probe.
func BenchmarkConsume(b *testing.B) {
	l := record.NewLayout(record.DefaultOptions)
	p := record.Probe{ID: 100, Provider: "syscall", Function: "getppid", Name: "entry"}
	eps, err := l.Add(&enabling.ECB{Actions: []enabling.Action{
		{Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: i8}}, {Kind: dof.ActDIFExpr, DIFO: &dif.Object{Ret: dif.StringType(16)}},
	}}, []record.Probe{p})
	if err != nil {
		b.Fatal(err)
	}
	const n = 100000
	buf := record.NewBuffer(n * int(eps[0].Size+8))
	for i := range n {
		if _, err := buf.Write(eps[0], uint64(i), []record.Value{{Int: uint64(i)}, {Ref: []byte("getppid\x00")}}); err != nil {
			b.Fatal(err)
		}
	}
	for _, format := range []consumer.Format{consumer.Text, consumer.JSON} {
		b.Run(format.String(), func(b *testing.B) {
			for b.Loop() {
				c := consumer.New(l, consumer.Config{Out: io.Discard, Format: format})
				if err := c.Consume(0, buf.Bytes(), 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "firings/s")
		})
	}
}

var update = flag.Bool("update", false, "rewrite testdata/json.golden")

// TestJSONGolden keeps the schema stable: a program with a record of
// each kind and an aggregation of each function, run through the VM,
// writes what testdata/json.golden holds, line for line. A change shows
// as a diff; -update rewrites the file once the change is meant (and
// the manual page says so, with a new JSONVersion if a field changes
// meaning or goes away).
func TestJSONGolden(t *testing.T) {
	_, r := runJSON(t, `
		BEGIN {
			trace(-1); trace((unsigned char)200); trace("s"); trace(1 == 1);
			printf("%d %u %x %s %c|\n", -1, 2, 255, "str", 65);
			@n["k", 1] = count(); @s = sum(3); @mn = min(-1); @mx = max(7); @a = avg(3); @sd = stddev(5);
			@q = quantize(3); @l = lquantize(4, 0, 10, 2); @ll = llquantize(12, 10, 0, 3, 10);
		}
		BEGIN { x = 0; y = 1 / x; }
		tick-1s { printa(@n); exit(3); }
		END { trace("end"); }`)
	golden := filepath.Join("testdata", "json.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(r.out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(r.out, "\n")); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestJSONFreopen checks that freopen() sends the objects from its
// firing's on to the file, and freopen("") back.
func TestJSONFreopen(t *testing.T) {
	name := filepath.Join(t.TempDir(), "out.json")
	objs, _ := runJSON(t, `BEGIN { freopen("`+name+`"); trace(1); } BEGIN { freopen(""); trace(2); exit(0); }`)
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	file := decodeLines(t, string(b))
	if len(file) != 1 || len(objs) != 1 {
		t.Fatalf("%d objects in the file, %d in the output; want 1 and 1", len(file), len(objs))
	}
	if diff := cmp.Diff([]any{object{"action": "freopen", "format": name, "file": name, "args": []any{}}, object{"action": "trace", "value": num("1")}}, file[0]["records"]); diff != "" {
		t.Errorf("the file's firing (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(object{"action": "trace", "value": num("2")}, objs[0]["records"].([]any)[1]); diff != "" {
		t.Errorf("the output's firing (-want +got):\n%s", diff)
	}
}
