package parser

import (
	"strings"

	"github.com/kdtrace/kdtrace/dlang/ast"
	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/dlang/token"
)

// control reads the control line starting at the '#' under l.off and
// executes it, as dt_lex.l's S3 state and dt_pragma do: interpreter lines
// are skipped, line markers move the position, pragmas are recorded and
// checked, anything else is an error.
func (l *lexer) control() {
	hash := l.here()
	start := l.off + 1
	end := start
	var text strings.Builder
	for end < len(l.src) && l.src[end] != '\n' {
		if l.src[end] == '\\' && end+1 < len(l.src) && l.src[end+1] == '\n' {
			text.WriteString(l.src[start:end])
			end += 2
			start = end
			l.newline()
			continue
		}
		end++
	}
	text.WriteString(l.src[start:end])
	l.off = end
	line := text.String()
	if strings.HasPrefix(line, "!") {
		return
	}
	l.p.pragma(hash, controlWords(line))
}

// controlWords splits a control line into words: runs of non-blank
// characters, and quoted strings (kept with their quotes). Comments are
// dropped.
func controlWords(s string) []string {
	var words []string
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r':
			i++
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return words
			}
			i += j + 4
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j < len(s) {
				j++
			}
			words = append(words, s[i:min(j, len(s))])
			i = j
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\f\v\r\"", rune(s[j])) && !strings.HasPrefix(s[j:], "/*") {
				j++
			}
			words = append(words, s[i:j])
			i = j
		}
	}
	return words
}

// Kinds of control directive names, as dt_pragma.c ranks them: a name
// of kind k may follow "#", "#pragma" or "#pragma D" when k is at most
// the kind reached.
const (
	kindDir = iota // #name
	kindSub        // #pragma name
	kindDcp        // #pragma D name
)

// directive returns the kind of control directive name w, and false
// for a name that is none. A switch, not a map, as are the parser's
// other small tables, so that they cost nothing at start-up.
func directive(w string) (int, bool) {
	switch w {
	case "attributes", "binding", "depends_on", "option":
		return kindDcp, true
	case "error", "ident", "line":
		return kindDir, true
	}
	return 0, false
}

// pragma executes one control line, given as its words after the '#'.
func (p *parser) pragma(pos token.Pos, words []string) {
	kind := kindDir
	for i, w := range words {
		switch {
		case isInt(w):
			p.lineMarker(pos, "", words[i:])
			return
		case isQuoted(w):
			p.fail(diag.Errorf(pos, diag.D_PRAGCTL_INVAL, "invalid control directive"))
		case w == "pragma" && kind == kindDir:
			kind = kindSub
			continue
		case w == "D" && kind == kindSub:
			kind = kindDcp
			continue
		}
		k, ok := directive(w)
		if !ok || k > kind {
			switch kind {
			case kindDir:
				p.fail(diag.Errorf(pos, diag.D_PRAGCTL_INVAL, "invalid control directive: #%s", w))
			case kindDcp:
				p.fail(diag.Errorf(pos, diag.D_PRAGMA_INVAL, "invalid D pragma: %s", w))
			}
			return // other compilers' pragmas are ignored
		}
		p.directive(pos, w, words[i+1:])
		return
	}
}

// directive runs the control directive name with its arguments.
func (p *parser) directive(pos token.Pos, name string, args []string) {
	switch name {
	case "line":
		p.lineMarker(pos, name, args)
		return
	case "ident":
		return
	case "error":
		var b strings.Builder
		for _, a := range args {
			if isInt(a) {
				continue
			}
			if isQuoted(a) {
				a = unescape(a[1 : len(a)-1])
			}
			b.WriteString(a)
			b.WriteByte(' ')
		}
		p.fail(diag.Errorf(pos, diag.D_PRAGERR, "#%s: %s", name, b.String()))
	case "option":
		if len(args) == 0 || isInt(args[0]) || isQuoted(args[0]) {
			p.fail(diag.Errorf(pos, diag.D_PRAGMA_MALFORM, "malformed #pragma %s <option>=<val>", name))
		}
		if len(args) > 1 {
			p.fail(diag.Errorf(pos, diag.D_PRAGMA_MALFORM, "superfluous arguments specified for #pragma %s", name))
		}
		opt, val, hasVal := strings.Cut(args[0], "=")
		if p.cfg.SetOption != nil {
			if err := p.cfg.SetOption(opt, val); err != nil {
				if hasVal {
					p.fail(diag.Errorf(pos, diag.D_PRAGMA_OPTSET, "failed to set option '%s' to '%s': %s", opt, val, err))
				}
				p.fail(diag.Errorf(pos, diag.D_PRAGMA_OPTSET, "failed to set option '%s': %s", opt, err))
			}
		}
	case "depends_on":
		if len(args) != 2 || !isIdentWord(args[0]) || !isIdentWord(args[1]) {
			p.fail(diag.Errorf(pos, diag.D_PRAGMA_MALFORM, "malformed #pragma %s <class> <name>", name))
		}
		switch args[0] {
		case "provider", "module", "library":
		default:
			p.fail(diag.Errorf(pos, diag.D_PRAGMA_INVAL, "invalid class %s specified by #pragma %s", args[0], name))
		}
		if p.cfg.DependsOn != nil {
			if err := p.cfg.DependsOn(args[0], args[1]); err != nil {
				p.fail(diag.Errorf(pos, diag.D_PRAGMA_DEPEND, "%s", err))
			}
		}
	case "attributes":
		// Either <attributes> <ident>, or the attributes of one part of
		// a provider: <attributes> provider <name> <part>.
		providerForm := len(args) == 4 && args[1] == "provider"
		if len(args) != 2 && !providerForm || !isIdentWord(args[0]) || !isIdentWord(args[1]) {
			p.fail(diag.Errorf(pos, diag.D_PRAGMA_MALFORM, "malformed #pragma %s <attributes> <ident>", name))
		}
		if !validAttributes(args[0]) {
			p.fail(diag.Errorf(pos, diag.D_PRAGMA_INVAL, "invalid attributes specified by #pragma %s", name))
		}
		if providerForm {
			switch args[3] {
			case "provider", "module", "function", "name", "args":
			default:
				p.fail(diag.Errorf(pos, diag.D_PRAGMA_INVAL, "invalid component \"%s\" in attribute #pragma for provider %s", args[3], args[2]))
			}
			break
		}
		p.pragmaIdents = append(p.pragmaIdents, pragmaIdent{pos, name, args[1]})
	case "binding":
		if len(args) != 2 || !isQuoted(args[0]) || !isIdentWord(args[1]) {
			p.fail(diag.Errorf(pos, diag.D_PRAGMA_MALFORM, "malformed #pragma %s \"version\" <ident>", name))
		}
		if !validVersion(args[0][1 : len(args[0])-1]) {
			p.fail(diag.Errorf(pos, diag.D_PRAGMA_INVAL, "invalid version string specified by #pragma %s", name))
		}
		p.pragmaIdents = append(p.pragmaIdents, pragmaIdent{pos, name, args[1]})
	}
	p.prog.Pragmas = append(p.prog.Pragmas, &ast.Pragma{Hash: pos, Words: append([]string{name}, args...)})
}

func isQuoted(w string) bool { return len(w) >= 2 && w[0] == '"' && w[len(w)-1] == '"' }

func isIdentWord(w string) bool { return !isInt(w) && !isQuoted(w) }

// isInt reports whether w is an integer constant (RGX_INT) as a whole.
func isInt(w string) bool {
	if w == "" || !isDigit(w[0]) {
		return false
	}
	i, _ := intDigits(w)
	return strings.Trim(w[i:], "uUlL") == "" && len(w)-i <= 3
}

// lineMarker handles "#line N ["file" [state]]" and cpp's "# N "file"
// flags". dtrace makes the line after a cpp marker line N, and the line
// after a #line directive line N+1; kdtrace keeps that difference.
func (p *parser) lineMarker(pos token.Pos, name string, args []string) {
	// dtrace takes one state flag; GNU cpp writes several ("1 3 4").
	malformed := len(args) == 0 || !isInt(args[0]) || len(args) > 1 && !isQuoted(args[1])
	for _, a := range args[min(len(args), 2):] {
		malformed = malformed || !isInt(a)
	}
	if malformed {
		p.fail(diag.Errorf(pos, diag.D_PRAGMA_MALFORM, "malformed #line <line> [ [\"file\"] state ]"))
	}
	v, _, err := parseUint(strings.TrimRight(args[0], "uUlL"), false)
	if err != nil || v > 1<<31 {
		p.fail(diag.Errorf(pos, diag.D_PRAGMA_MALFORM, "malformed #line <line> [ [\"file\"] state ]"))
	}
	l := &p.lex
	if len(args) > 1 {
		f := unescape(args[1][1 : len(args[1])-1])
		// cpp names its standard input, and dtrace its own preprocessed
		// input, by other names than the script's.
		if f == "<stdin>" || f == "-" || strings.HasPrefix(f, "/dev/fd/") {
			f = p.file
		}
		l.file = token.File(f)
	}
	l.line = int(v)
	if name == "" {
		l.line-- // the marker's own newline is still ahead
	}
}

// validAttributes checks name/data/class stability triples such as
// Stable/Stable/Common.
func validAttributes(s string) bool {
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return false
	}
	stab := []string{"Internal", "Private", "Obsolete", "External", "Unstable", "Evolving", "Stable", "Standard"}
	class := []string{"Unknown", "CPU", "Platform", "Group", "ISA", "Common"}
	return contains(stab, parts[0]) && contains(stab, parts[1]) && contains(class, parts[2])
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// validVersion accepts D version strings: major[.minor[.micro]].
func validVersion(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if !isAllDigits(p) {
			return false
		}
	}
	return true
}

func isAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
