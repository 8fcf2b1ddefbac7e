package probe

import "strings"

// maxGlobDepth is how deeply a pattern's stars may nest before the
// match gives up, as DTRACE_PROBEKEY_MAXDEPTH in the kernel: a pattern
// with more stars than that matches nothing.
const maxGlobDepth = 8

// isGlob reports whether s is a glob pattern rather than a literal:
// whether it holds one of * ? [ or \, as dtrace's strisglob decides.
// An empty field is not a glob but matches anything; see Pattern.
func isGlob(s string) bool {
	return strings.ContainsAny(s, "*?[\\")
}

// Glob reports whether s matches the glob pattern p as the dtrace kernel
// module matches probe description fields (dtrace_match_glob): * matches
// any run of characters, ? any one character, [...] a set with ranges
// and ! for negation, and \ quotes the next character. Unlike
// path.Match it never fails on a malformed pattern: an unterminated set
// simply matches nothing.
func Glob(s, p string) bool {
	return glob(s, p, 0) > 0
}

// glob is dtrace_match_glob: 1 for a match, 0 for none and -1 when the
// stars nest too deeply.
func glob(s, p string, depth int) int {
	if depth > maxGlobDepth {
		return -1
	}
	for {
		olds := s
		var s1 byte
		if len(s) > 0 {
			s1, s = s[0], s[1:]
		}
		if len(p) == 0 {
			if s1 == 0 {
				return 1
			}
			return 0
		}
		c := p[0]
		p = p[1:]
		switch c {
		case '[':
			if s1 == 0 {
				return 0
			}
			rest, ok := matchSet(s1, p)
			if !ok {
				return 0
			}
			p = rest
		case '\\':
			if len(p) == 0 {
				return 0
			}
			c, p = p[0], p[1:]
			fallthrough
		default:
			if c != s1 {
				return 0
			}
			if s1 == 0 {
				return 0
			}
		case '?':
			if s1 == 0 {
				return 0
			}
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:] // consecutive stars are one
			}
			if len(p) == 0 {
				return 1
			}
			for s := olds; len(s) > 0; s = s[1:] {
				if r := glob(s, p, depth+1); r != 0 {
					return r
				}
			}
			return 0
		}
	}
}

// matchSet matches s1 against the set that p starts with, just after
// its '[', and returns the pattern after the closing ']'. It keeps the
// kernel's reading of odd sets: a '-' at either end is literal, and in a
// negated set every member, range ends included, must differ from s1.
func matchSet(s1 byte, p string) (string, bool) {
	ok, not := false, false
	if len(p) > 0 && p[0] == '!' {
		not, p = true, p[1:]
	}
	next := func() (byte, bool) {
		if len(p) == 0 {
			return 0, false
		}
		c := p[0]
		p = p[1:]
		return c, true
	}
	c, more := next()
	if !more {
		return "", false
	}
	var lc byte
	for {
		if c == '-' && lc != 0 && (len(p) == 0 || p[0] != ']') {
			if c, more = next(); !more {
				return "", false
			}
			if c == '\\' {
				if c, more = next(); !more {
					return "", false
				}
			}
			in := lc <= s1 && s1 <= c
			if not && in {
				return "", false
			}
			ok = ok || in || not
		} else if c == '\\' {
			if c, more = next(); !more {
				return "", false
			}
		}
		lc = c
		if not && s1 == c {
			return "", false
		}
		ok = ok || not || s1 == c
		if c, more = next(); !more {
			return "", false
		}
		if c == ']' {
			break
		}
	}
	return p, ok
}
