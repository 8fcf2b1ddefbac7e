package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		line    string
		want    Report
		wantErr string
	}{
		{line: "status 200 OK", want: Report{Kind: Status, N: 200, Text: "OK"}},
		{line: "status 404 Not Found", want: Report{Kind: Status, N: 404, Text: "Not Found"}},
		{line: "status 599", want: Report{Kind: Status, N: 599}},
		{line: "length 0", want: Report{Kind: Length}},
		{line: "length 9223372036854775807", want: Report{Kind: Length, N: 1<<63 - 1}},
		{line: "modified 1577934245", want: Report{Kind: Modified, N: 1577934245}},
		{line: "progress 102400", want: Report{Kind: Progress, N: 102400}},
		{line: "done 4096", want: Report{Kind: Done, N: 4096}},
		{line: "error dial tcp 127.0.0.1:1: connect: connection refused", want: Report{Kind: Error, Text: "dial tcp 127.0.0.1:1: connect: connection refused"}},

		{line: "", wantErr: `unknown report ""`},
		{line: "version 1", wantErr: `unknown report "version"`},
		{line: "Status 200 OK", wantErr: `unknown report "Status"`},
		{line: "status", wantErr: "status: no number"},
		{line: "status OK", wantErr: `status: "OK" is no number`},
		{line: "status 99 Odd", wantErr: `status: "99" is no status code`},
		{line: "status 099 Odd", wantErr: `status: "099" is no status code`},
		{line: "status 2000 Odd", wantErr: `status: "2000" is no status code`},
		{line: "length", wantErr: "length: no number"},
		{line: "length -1", wantErr: `length: "-1" is no number`},
		{line: "length +1", wantErr: `length: "+1" is no number`},
		{line: "length 1 2", wantErr: `length: "1 2" is no number`},
		{line: "length  1", wantErr: `length: " 1" is no number`},
		{line: "progress 0x10", wantErr: `progress: "0x10" is no number`},
		{line: "done 9223372036854775808", wantErr: `done: "9223372036854775808" is too large`},
		{line: "modified yesterday", wantErr: `modified: "yesterday" is no number`},
		{line: "error", wantErr: "error without a text"},
		{line: "error ", wantErr: "error without a text"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.line)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("Parse(%q): %+v, %v; want the error %q", tt.line, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.line, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.line, diff)
		}
		if s := got.String(); s != tt.line {
			t.Errorf("Parse(%q).String() = %q", tt.line, s)
		}
	}
}

// TestWriterReader: what the Writer writes, the Reader reads back,
// starting with the version line.
func TestWriterReader(t *testing.T) {
	tests := [][]Report{
		{{Kind: Status, N: 200, Text: "OK"}, {Kind: Length, N: 3}, {Kind: Modified, N: 1577934245}, {Kind: Progress, N: 1}, {Kind: Progress, N: 3}, {Kind: Done, N: 3}},
		{{Kind: Status, N: 200, Text: "OK"}, {Kind: Done}},
		{{Kind: Status, N: 404, Text: "Not Found"}},
		{{Kind: Status, N: 500}},
		{{Kind: Error, Text: "dial tcp: lookup nowhere: no such host"}},
		{{Kind: Status, N: 200, Text: "OK"}, {Kind: Progress, N: 7}, {Kind: Error, Text: "unexpected EOF"}},
	}
	for _, reports := range tests {
		var b bytes.Buffer
		w := NewWriter(&b)
		for _, r := range reports {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if !strings.HasPrefix(b.String(), "version 1\n") {
			t.Errorf("written %q, without the version first", b.String())
		}
		r := NewReader(&b)
		var got []Report
		for {
			rep, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("reading %v: %v", reports, err)
			}
			got = append(got, rep)
		}
		if diff := cmp.Diff(reports, got); diff != "" {
			t.Errorf("read back (-written +read):\n%s", diff)
		}
	}
}

// TestWriteOneLine: a text with line breaks stays one line.
func TestWriteOneLine(t *testing.T) {
	var b bytes.Buffer
	if err := NewWriter(&b).Write(Report{Kind: Error, Text: "two\nlines\r"}); err != nil {
		t.Fatal(err)
	}
	if want := "version 1\nerror two lines \n"; b.String() != want {
		t.Errorf("wrote %q, want %q", b.String(), want)
	}
}

// TestReaderErrors: reports that are garbled, out of order or cut
// short are errors that say which line and why.
func TestReaderErrors(t *testing.T) {
	tests := []struct {
		input   string
		reports int // read before the error
		wantErr string
	}{
		{"", 0, "no reports"},
		{"status 200 OK\n", 0, `line 1: "status 200 OK", not the version`},
		{"version 2\nstatus 200 OK\n", 0, "line 1: protocol version 2, not kdtrace's 1"},
		{"version 1\n", 0, "after line 1: the reports end without a status: unexpected EOF"},
		{"version 1\nstatus 200 OK\nprogress 10\n", 2, "after line 3: the reports end before done: unexpected EOF"},
		{"version 1\nstatus 200 OK\nprogress 10", 2, "after line 3: the reports end before done: unexpected EOF"},
		{"version 1\nstatus 200 OK\nbogus 1\n", 1, `line 3: unknown report "bogus"`},
		{"version 1\nstatus 200 OK\nprogress ten\n", 1, `line 3: progress: "ten" is no number`},
		{"version 1\nprogress 10\n", 0, "line 2: progress before the status"},
		{"version 1\nlength 10\n", 0, "line 2: length before the status"},
		{"version 1\ndone 10\n", 0, "line 2: done before the status"},
		{"version 1\nstatus 200 OK\nstatus 200 OK\n", 1, "line 3: a second status"},
		{"version 1\nstatus 404 Not Found\nlength 10\n", 1, `line 3: length after "status 404 Not Found"`},
		{"version 1\nstatus 200 OK\nlength 1\nlength 2\n", 2, "line 4: a second length"},
		{"version 1\nstatus 200 OK\nmodified 1\nmodified 2\n", 2, "line 4: a second modified"},
		{"version 1\nstatus 200 OK\nprogress 1\nlength 2\n", 2, "line 4: length after the body's start"},
		{"version 1\nstatus 200 OK\nprogress 1\nmodified 2\n", 2, "line 4: modified after the body's start"},
		{"version 1\nstatus 200 OK\nprogress 10\nprogress 5\n", 2, "line 4: progress 5 after 10 bytes"},
		{"version 1\nstatus 200 OK\nprogress 10\ndone 5\n", 2, "line 4: done 5 after 10 bytes"},
		{"version 1\nstatus 200 OK\ndone 5\nprogress 6\n", 2, `line 4: progress after "done 5"`},
		{"version 1\nerror refused\nstatus 200 OK\n", 1, `line 3: status after "error refused"`},
		{"version 1\nstatus 200 OK\ndone 5\nerror late\n", 2, `line 4: error after "done 5"`},
		{"version 1\nerror " + strings.Repeat("x", 70000) + "\n", 0, "after line 1: bufio.Scanner: token too long"},
	}
	for _, tt := range tests {
		r := NewReader(strings.NewReader(tt.input))
		n := 0
		var err error
		for {
			if _, err = r.Next(); err != nil {
				break
			}
			n++
		}
		if err == io.EOF || err.Error() != tt.wantErr || n != tt.reports {
			t.Errorf("%q: %d reports, then %v; want %d, then %q", tt.input, n, err, tt.reports, tt.wantErr)
		}
		if strings.Contains(tt.wantErr, "end") && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%q: %v is not io.ErrUnexpectedEOF", tt.input, err)
		}
	}
}
