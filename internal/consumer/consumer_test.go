package consumer_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dlang/parser"
)

// line is the start of a firing's line without quiet: "%3d %6d %32s ".
func line(id int, fn string) string {
	return "  0 " + strings.Repeat(" ", 6-len(itoa(id))) + itoa(id) + " " + strings.Repeat(" ", 32-len(fn)) + fn + " "
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

const heading = "CPU     ID                    FUNCTION:NAME\n"

// TestOutput runs D programs through the VM and the record buffers and
// checks what the consumer prints: dtrace's default output, trace() of
// each size and kind, exit statuses, and errors. The expected texts are
// built from dtrace's formats: the heading "%3s %6s %32s", each
// firing's "%3d %6d %32s ", integers as " %3d", " %5d", " %8d" and
// " %16lld", strings "  %-33s", and the final newline dtrace writes.
func TestOutput(t *testing.T) {
	hexRow := func(off, hex, text string) string {
		return strings.Repeat(" ", 5) + off + ":" + hex + "  " + text + "\n"
	}
	// A margin of 5, then 6 spaces, then "  %c" for each column.
	dumpHead := "\n" + strings.Repeat(" ", 11) + "  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f  0123456789abcdef\n"
	tests := []struct {
		name, src string
		out       string
		status    int
	}{
		{"an ECB without actions prints its line",
			`BEGIN {} BEGIN { exit(0); }`,
			heading + line(1, ":BEGIN") + "\n" + line(1, ":BEGIN") + "\n\n", 0},
		{"an ECB that records nothing prints nothing",
			`BEGIN { x = 1; } BEGIN { exit(0); }`,
			heading + line(1, ":BEGIN") + "\n\n", 0},
		{"trace() of each integer size",
			`BEGIN { trace((char)65); trace((short)-1); trace(-1); trace((long long)-1); trace((unsigned char)200); exit(0); }`,
			heading + line(1, ":BEGIN") + "  65 65535       -1               -1 200\n\n", 0},
		{"quiet integers",
			`#pragma D option quiet
			BEGIN { trace(-1); trace(" "); trace((short)-1); trace((long long)-1); exit(0); }`,
			"-1 65535-1\n", 0},
		{"trace() of a string",
			`BEGIN { trace("hello"); exit(0); }`,
			heading + line(1, ":BEGIN") + "  hello" + strings.Repeat(" ", 28) + "\n\n", 0},
		{"trace() of a structure: a hex dump",
			`struct s { int a; int b; int c; } x; BEGIN { x.a = 1; x.b = 0x41424344; trace(x); exit(0); }`,
			heading + line(1, ":BEGIN") + dumpHead + hexRow("    0", " 01 00 00 00 44 43 42 41 00 00 00 00"+strings.Repeat("   ", 4), "....DCBA....") + "\n\n", 0},
		{"trace() of data of an integer's size: an integer",
			`struct s { int a; int b; } x; BEGIN { x.a = 1; x.b = 2; trace(x); exit(0); }`,
			heading + line(1, ":BEGIN") + "       8589934593\n\n", 0},
		{"trace() of printable bytes without a NUL: a string",
			`char c[5]; BEGIN { c[0] = 'a'; c[1] = 'b'; c[2] = 'c'; c[3] = 'd'; c[4] = 'e'; trace(c); exit(0); }`,
			heading + line(1, ":BEGIN") + "  abcde" + strings.Repeat(" ", 28) + "\n\n", 0},
		{"rawbytes dumps even strings",
			`#pragma D option rawbytes
			#pragma D option strsize=5
			BEGIN { trace("ab"); exit(0); }`,
			heading + line(1, ":BEGIN") + dumpHead + hexRow("    0", " 61 62 00 00 00"+strings.Repeat("   ", 11), "ab...") + "\n\n", 0},
		{"printf after the line",
			`BEGIN { printf("%s=%d", "x", 3); exit(0); }`,
			heading + line(1, ":BEGIN") + "x=3\n\n", 0},
		{"END after an exit() in BEGIN; later BEGIN clauses do not run",
			`#pragma D option quiet
			BEGIN { printf("begin\n"); exit(2); } BEGIN { printf("skipped\n"); } END { printf("end\n"); }`,
			"begin\nend\n\n", 2},
		{"an exit() in END sets the status",
			`BEGIN { exit(2); } END { exit(5); }`,
			heading + line(1, ":BEGIN") + "\n" + line(2, ":END") + "\n\n", 5},
		{"a false predicate records nothing",
			`#pragma D option quiet
			BEGIN /1 == 2/ { printf("no\n"); } BEGIN /1 == 1/ { printf("yes\n"); exit(0); }`,
			"yes\n\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := compile("t.d", []byte(tt.src), &parser.Config{}, false)
			if err != nil {
				t.Fatal(err)
			}
			got, err := execute(p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.out, got.out); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
			if got.status != tt.status {
				t.Errorf("exit status %d, want %d", got.status, tt.status)
			}
		})
	}
}

// TestFault checks that a faulting clause records nothing and that the
// ERROR probe's clause from libdtrace reports it as dtrace does.
func TestFault(t *testing.T) {
	p, err := compile("t.d", []byte(`#pragma D option quiet
		BEGIN { printf("lost"); trace(*(int *)0); }
		BEGIN { x = 0; y = 1 / x; }
		BEGIN { printf("kept\n"); exit(0); }`), &parser.Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := execute(p)
	if err != nil {
		t.Fatal(err)
	}
	if got.out != "kept\n\n" {
		t.Errorf("output %q, want %q", got.out, "kept\n\n")
	}
	want := regexp.MustCompile(`^kdtrace: error on enabled probe ID 1 \(ID 1: dtrace:::BEGIN\): invalid address \(0x0\) in action #2 at DIF offset \d+
kdtrace: error on enabled probe ID 2 \(ID 1: dtrace:::BEGIN\): divide-by-zero in action #2 at DIF offset \d+
$`)
	if !want.MatchString(got.errs) {
		t.Errorf("errors:\n%s\nwant them to match %s", got.errs, want)
	}
}

// TestFtruncate checks that ftruncate() empties a file output, and
// what comes after is written from its start.
func TestFtruncate(t *testing.T) {
	p, err := compile("t.d", []byte(`#pragma D option quiet
		BEGIN { printf("lost\n"); ftruncate(); printf("kept\n"); exit(0); }`), &parser.Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := executeTo(p, f); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(f.Name())
	if string(b) != "kept\n\n" {
		t.Errorf("file holds %q, want %q", b, "kept\n\n")
	}
}

// TestFreopen checks that freopen() sends the actions' output to a
// file, appending, while dtrace(1)'s own lines stay on the output, that
// freopen("") brings it back, and that a file that cannot be opened is
// an error on the enabled probe, after which the output stays where it
// was.
func TestFreopen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("old\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	p, err := compile("t.d", []byte(`
		BEGIN { printf("a"); freopen("%s", "`+file+`"); printf("b"); }
		BEGIN { freopen("%s", "."); printf("c"); freopen(""); printf("d"); freopen(""); exit(0); }`), &parser.Config{}, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := execute(p)
	if err != nil {
		t.Fatal(err)
	}
	want := heading + line(1, ":BEGIN") + "a\n" + line(1, ":BEGIN") + "d\n\n"
	if diff := cmp.Diff(want, got.out); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	b, _ := os.ReadFile(file)
	if string(b) != "old\nbc" {
		t.Errorf("the file holds %q, want %q", b, "old\nbc")
	}
	wantErr := `kdtrace: error on enabled probe ID 2 (ID 1: dtrace:::BEGIN): couldn't freopen() ".": Is a directory` + "\n"
	if got.errs != wantErr {
		t.Errorf("errors %q, want %q", got.errs, wantErr)
	}
}
