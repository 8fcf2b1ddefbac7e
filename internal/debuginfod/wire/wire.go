// Package wire is the line protocol in which kdtrace-debuginfod, the
// program that makes kdtrace's debuginfod downloads, reports one
// download to kdtrace. It is kept apart from the download itself
// (package transfer, over net/http) so that kdtrace can read the
// reports without linking net/http.
//
// kdtrace runs kdtrace-debuginfod with the URL as its argument, the
// file to fill open on descriptor 3, and pipes on its standard input
// (never written: its end, when kdtrace ends, ends the download) and
// standard output, where it writes one report a line, a keyword and
// its argument:
//
//	version 1             first: the protocol's version
//	status 200 OK         the server's answer, its code and text
//	length 4096           after status 200: the Content-Length, if sent
//	modified 1577934245   after status 200: the Last-Modified time, if
//	                      sent and valid, in seconds since 1970
//	progress 102400       the bytes in the file so far, after each write
//	done 4096             the body is in the file whole: its size
//	error TEXT            the download failed, and why
//
// The reports end after done, after error (which may come at any
// point), or after a status other than 200. Numbers are decimal; the
// texts are the rest of the line.
package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Version is the protocol's version, which both ends must speak: a
// kdtrace-debuginfod of another kdtrace is refused.
const Version = 1

// Kind is what a report says.
type Kind uint8

const (
	Status   Kind = iota + 1 // N is the code, Text the server's text for it
	Length                   // N is the body's length
	Modified                 // N is the file's time, in seconds since 1970
	Progress                 // N is the bytes in the file so far
	Done                     // N is the body's size, all in the file
	Error                    // Text is why the download failed
)

var keywords = [...]string{Status: "status", Length: "length", Modified: "modified", Progress: "progress", Done: "done", Error: "error"}

func (k Kind) String() string {
	if int(k) < len(keywords) && keywords[k] != "" {
		return keywords[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Report is one line of the protocol.
type Report struct {
	Kind Kind
	N    int64
	Text string
}

// String returns the report's line, without its newline. A line break
// in Text becomes a space.
func (r Report) String() string {
	switch r.Kind {
	case Status:
		return strings.TrimSpace(fmt.Sprintf("%s %d %s", r.Kind, r.N, oneLine(r.Text)))
	case Error:
		return fmt.Sprintf("%s %s", r.Kind, oneLine(r.Text))
	}
	return fmt.Sprintf("%s %d", r.Kind, r.N)
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}

// Parse reads one line, without its newline. The version line is the
// Reader's; Parse knows only reports.
func Parse(line string) (Report, error) {
	word, arg, _ := strings.Cut(line, " ")
	kind := Kind(0)
	for k, w := range keywords {
		if w != "" && w == word {
			kind = Kind(k)
		}
	}
	r := Report{Kind: kind}
	var err error
	switch kind {
	case 0:
		return r, fmt.Errorf("unknown report %q", word)
	case Error:
		if arg == "" {
			return r, errors.New("error without a text")
		}
		r.Text = arg
	case Status:
		code, text, _ := strings.Cut(arg, " ")
		if r.N, err = number(code); err == nil && (len(code) != 3 || r.N < 100) {
			err = fmt.Errorf("%q is no status code", code)
		}
		r.Text = text
	default:
		r.N, err = number(arg)
	}
	if err != nil {
		return r, fmt.Errorf("%s: %w", kind, err)
	}
	return r, nil
}

// number reads a decimal number of digits only.
func number(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("no number")
	}
	if strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is no number", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n, nil
}

// Writer writes reports, the version line before the first.
type Writer struct {
	w       io.Writer
	started bool
}

func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes r's line, with one write.
func (w *Writer) Write(r Report) error {
	var b []byte
	if !w.started {
		b = fmt.Appendf(b, "version %d\n", Version)
		w.started = true
	}
	b = append(append(b, r.String()...), '\n')
	_, err := w.w.Write(b)
	return err
}

// Reader reads reports and checks their order.
type Reader struct {
	s    *bufio.Scanner
	line int
	// What has been read: the version line, the status (0 before
	// it), the length and time, the last byte count, the end.
	version  bool
	status   int64
	length   bool
	modified bool
	n        int64
	progress bool
	ended    *Report
}

func NewReader(r io.Reader) *Reader { return &Reader{s: bufio.NewScanner(r)} }

// Next returns the next report, and io.EOF after the last. A line
// that is no report, one out of order, or reports that end too soon
// are an error that names the line.
func (r *Reader) Next() (Report, error) {
	if !r.s.Scan() {
		if err := r.s.Err(); err != nil {
			return Report{}, fmt.Errorf("after line %d: %w", r.line, err)
		}
		switch {
		case !r.version:
			return Report{}, errors.New("no reports")
		case r.ended == nil && r.status == 0:
			return Report{}, fmt.Errorf("after line %d: the reports end without a status: %w", r.line, io.ErrUnexpectedEOF)
		case r.ended == nil:
			return Report{}, fmt.Errorf("after line %d: the reports end before done: %w", r.line, io.ErrUnexpectedEOF)
		}
		return Report{}, io.EOF
	}
	r.line++
	line := r.s.Text()
	if !r.version {
		if v, ok := strings.CutPrefix(line, "version "); !ok {
			return Report{}, fmt.Errorf("line 1: %q, not the version", line)
		} else if v != strconv.Itoa(Version) {
			return Report{}, fmt.Errorf("line 1: protocol version %s, not kdtrace's %d", v, Version)
		}
		r.version = true
		return r.Next()
	}
	rep, err := Parse(line)
	if err == nil {
		err = r.follow(rep)
	}
	if err != nil {
		return Report{}, fmt.Errorf("line %d: %w", r.line, err)
	}
	return rep, nil
}

// follow checks that rep may come next, and notes it.
func (r *Reader) follow(rep Report) error {
	switch {
	case r.ended != nil:
		return fmt.Errorf("%s after %q", rep.Kind, r.ended)
	case rep.Kind == Error:
	case rep.Kind == Status && r.status != 0:
		return errors.New("a second status")
	case rep.Kind != Status && r.status == 0:
		return fmt.Errorf("%s before the status", rep.Kind)
	case rep.Kind == Length && r.length, rep.Kind == Modified && r.modified:
		return fmt.Errorf("a second %s", rep.Kind)
	case (rep.Kind == Length || rep.Kind == Modified) && r.progress:
		return fmt.Errorf("%s after the body's start", rep.Kind)
	case (rep.Kind == Progress || rep.Kind == Done) && rep.N < r.n:
		return fmt.Errorf("%s %d after %d bytes", rep.Kind, rep.N, r.n)
	}
	switch rep.Kind {
	case Status:
		r.status = rep.N
		if rep.N != 200 {
			r.ended = &rep
		}
	case Length:
		r.length = true
	case Modified:
		r.modified = true
	case Progress:
		r.n, r.progress = rep.N, true
	case Done, Error:
		r.ended = &rep
	}
	return nil
}
