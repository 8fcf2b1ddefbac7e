// Package fuzznest lets the compiler's fuzzers reach deep nesting: a
// fuzz input may carry a directive that repeats part of it thousands of
// times, so that a few bytes the mutator can change stand for a script
// nested around, or far beyond, the parser's limit.
//
// An input of the form
//
//	A NUL k B NUL C [NUL D [NUL E]]
//
// where k is one byte expands to A, B repeated n times, C, D repeated n
// times, and E, with n = 128·k (up to 32,640):
// "x = " NUL k "(" NUL "1" NUL ")" NUL ";" is "x = (((…1…)));". Other
// inputs are left as they are: D source has no NUL bytes of its own.
package fuzznest

import "bytes"

// maxLen bounds an expansion, so that one input costs at most a
// megabyte, and a fuzzer a fraction of a second on it.
const maxLen = 1 << 20

// Expand expands src's nesting directive, if it has one.
func Expand(src []byte) []byte {
	a, rest, ok := bytes.Cut(src, []byte{0})
	if !ok || len(rest) == 0 {
		return src
	}
	n := 128 * int(rest[0])
	b, rest, _ := bytes.Cut(rest[1:], []byte{0})
	c, rest, _ := bytes.Cut(rest, []byte{0})
	d, e, _ := bytes.Cut(rest, []byte{0})
	if per := len(b) + len(d); per > 0 && n*per > maxLen {
		n = maxLen / per
	}
	out := make([]byte, 0, len(a)+len(c)+len(e)+n*(len(b)+len(d)))
	out = append(out, a...)
	out = append(out, bytes.Repeat(b, n)...)
	out = append(out, c...)
	out = append(out, bytes.Repeat(d, n)...)
	return append(out, e...)
}

// Input returns the input that Expand expands to a, b repeated 128·k
// times, c, d as many times, and e.
func Input(a, b, c, d, e string, k byte) []byte {
	return []byte(a + "\x00" + string(k) + b + "\x00" + c + "\x00" + d + "\x00" + e)
}

// shapes are the recursive constructs of D, as the five parts of an
// input: A, B (repeated), C, D (repeated), E.
var shapes = [][5]string{
	{"BEGIN { x = ", "(", "1", ")", "; }"},
	{"BEGIN /", "(", "y", ")", "/ { }"},
	{"BEGIN { x = ", "(long)", "y", "", "; }"},
	{"BEGIN { x = ", "!", "y", "", "; }"},
	{"BEGIN { x = ", "- ", "y", "", "; }"},
	{"BEGIN { x = ", "~", "y", "", "; }"},
	{"BEGIN { x = ", "*", "p", "", "; }"},
	{"BEGIN { x = ", "& ", "y", "", "; }"},
	{"BEGIN { x = ", "&", "y", "", "; }"},
	{"BEGIN { x = ", "++", "y", "", "; }"},
	{"BEGIN { x = ", "sizeof(", "y", ")", "; }"},
	{"BEGIN { x = ", "stringof ", "y", "", "; }"},
	{"BEGIN { x = ", "y ? 1 : ", "0", "", "; }"},
	{"BEGIN { x = ", "y ? ", "1", " : 0", "; }"},
	{"BEGIN { x = ", "y = ", "1", "", "; }"},
	{"BEGIN { x = y", " + y", "", "", "; }"},
	{"BEGIN { x = y", " || y", "", "", "; }"},
	{"BEGIN { x = y", ", y", "", "", "; }"},
	{"BEGIN { x = ", "(y + ", "y", ") * y", "; }"},
	{"BEGIN { x = a[1]", "[1]", "", "", "; }"},
	{"BEGIN { x = ", "a[", "1", "]", "; }"},
	{"BEGIN { x = ", "strlen(", "\"\"", ")", "; }"},
	{"struct st { int a; } s; BEGIN { x = s", ".a", "", "", "; }"},
	{"BEGIN { x = y", "++", "", "", "; }"},
	{"BEGIN { x = ", "xlate<int>(", "y", ")", "; }"},
	{"BEGIN { ", "if (y) ", "x = 1;", "", " }"},
	{"BEGIN { ", "if (y) { x = 1; ", "", "}", " }"},
	{"BEGIN { ", "if (y) x = 1; else ", "x = 2;", "", " }"},
	{"struct {", " struct {", " int x; ", "} m; ", "} s; BEGIN { }"},
	{"union {", " union {", " int x; ", "} m; ", "} u; BEGIN { }"},
	{"int ", "*", "q", "", "; BEGIN { x = q; }"},
	{"BEGIN { x = (int ", "*", ")0", "", "; }"},
	{"int q", "[1]", "", "", "; BEGIN { x = q[0]; }"},
	{"BEGIN { x = sizeof(int", "[1]", ")", "", "; }"},
	{"int ", "(", "q", ")", "; BEGIN { x = q; }"},
	{"int f(", "int (*)(", "int", ")", "); BEGIN { }"},
	{"struct tr { int a; }; translator struct tr < int *v > { a = ", "(", "*v", ")", "; }; BEGIN { x = xlate<struct tr>(p).a; }"},
	{"inline int iv = ", "- ", "y", "", "; BEGIN { x = iv; }"},
}

// decls declares what the shapes use.
const decls = "int y; int *p; int a[int];\n"

// Seeds returns every nesting shape of D at depths 128 and 10,112: past
// the parser's limit of 10,000, which the mutator can then move.
func Seeds() [][]byte {
	var seeds [][]byte
	for _, s := range shapes {
		for _, k := range []byte{1, 79} {
			seeds = append(seeds, Input(decls+s[0], s[1], s[2], s[3], s[4], k))
		}
	}
	return seeds
}
