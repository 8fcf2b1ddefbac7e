// Package diag defines the compile errors of the D tool chain: a position,
// one of dtrace's error tags (D_SYNTAX, D_INT_OFLOW, …) and a message, and
// formats them the way libdtrace's dt_set_errmsg does, so that kdtrace's
// messages can be compared with dtrace's.
package diag

import (
	"fmt"
	"strconv"

	"github.com/kdtrace/kdtrace/dlang/token"
)

// Tag is a dtrace compile error tag.
type Tag uint16

func (t Tag) String() string {
	if int(t) < len(tagNames) {
		return tagNames[t]
	}
	return "D_UNKNOWN"
}

// LookupTag returns the tag named name.
func LookupTag(name string) (Tag, bool) {
	for i, n := range tagNames {
		if n == name {
			return Tag(i), true
		}
	}
	return 0, false
}

// Error is a compile error at a position in D source.
type Error struct {
	Pos token.Pos
	Tag Tag
	Msg string
	// Region names the part of a clause the error lies in ("predicate"
	// or "action list"), which dtrace says when it has no line to give:
	// for programs given on the command line.
	Region string
}

// Error formats the error as dtrace does without errtags and without
// knowing the main file: "line N: msg".
func (e *Error) Error() string { return e.Format("", false) }

// Format renders the error as dt_set_errmsg does: an optional "[D_TAG] "
// prefix, then `"file", line N: ` when the error lies in a file other
// than main (an included one), else "line N: ", or "in region: " when
// there is no line, then the message.
func (e *Error) Format(main string, tags bool) string {
	var b []byte
	if tags {
		b = append(b, '[')
		b = append(b, e.Tag.String()...)
		b = append(b, "] "...)
	}
	switch file := e.Pos.Filename(); {
	case file != "" && file != main && e.Pos.IsValid():
		b = append(b, '"')
		b = append(b, file...)
		b = append(b, "\", line "...)
		b = strconv.AppendInt(b, int64(e.Pos.Line), 10)
		b = append(b, ": "...)
	case e.Pos.IsValid():
		b = append(b, "line "...)
		b = strconv.AppendInt(b, int64(e.Pos.Line), 10)
		b = append(b, ": "...)
	case e.Region != "":
		b = append(b, "in "...)
		b = append(b, e.Region...)
		b = append(b, ": "...)
	}
	b = append(b, e.Msg...)
	return string(b)
}

// Errorf returns an *Error whose message is formatted as by fmt.Sprintf.
func Errorf(pos token.Pos, tag Tag, format string, args ...any) *Error {
	return &Error{Pos: pos, Tag: tag, Msg: fmt.Sprintf(format, args...)}
}
