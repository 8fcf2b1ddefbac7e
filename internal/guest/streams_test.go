package guest

import (
	"regexp"
	"strings"
	"testing"
)

// clauseRE matches a D clause in a case's command line: what comes
// before its body (after the last quote: the probe descriptions and the
// predicate), and its body.
var clauseRE = regexp.MustCompile(`([^{}]*)\{([^{}]*)\}`)

// printRE matches the actions that write trace output, as statements
// (stack() as an aggregation's key writes nothing).
var printRE = regexp.MustCompile(`(?:^|;)\s*(printf|printa|trace|tracemem|print|stack|ustack|system)\s*\(`)

// TestGuestCasesApart checks the guest cases for a flake: a clause that
// prints while kdtrace's -c program runs shares the program's standard
// output unless -o sends kdtrace's elsewhere, and the program's lines
// can land in the middle of one of kdtrace's (its writes end where its
// buffer fills). BEGIN runs before the program starts and END after it
// ends, so they may print.
func TestGuestCasesApart(t *testing.T) {
	cmds := map[string]string{}
	for _, c := range guestCases {
		cmds[c.name] = c.cmd
	}
	for _, c := range kmodCases("") {
		cmds["module "+c.name] = c.cmd
	}
	for name, cmd := range cmds {
		if !strings.Contains(cmd, " -c ") || strings.Contains(cmd, " -o ") {
			continue
		}
		for _, m := range clauseRE.FindAllStringSubmatch(cmd, -1) {
			desc := m[1]
			if i := strings.LastIndexByte(desc, '\''); i >= 0 {
				desc = desc[i+1:]
			}
			desc = strings.TrimSpace(desc)
			if strings.HasPrefix(desc, "BEGIN") || strings.HasPrefix(desc, "END") || strings.HasPrefix(desc, "dtrace:::") {
				continue
			}
			if p := printRE.FindStringSubmatch(m[2]); p != nil {
				t.Errorf("%s: %s() at %s prints while the traced program runs, on its standard output (use -o)", name, p[1], desc)
			}
		}
	}
}
