package check

import (
	"sort"

	"github.com/kdtrace/kdtrace/dlang/types"
)

// Where kdtrace can say more than dtrace, it adds to dtrace's message,
// never replaces it: a misspelt name gets the nearest names that exist.

// suggestion returns " (did you mean x?)" for the candidate nearest to
// name, or "" when none is close: within a third of the name's length,
// and at least one edit.
func suggestion(name string, candidates []string) string {
	best, bestDist := "", len(name)/3+1
	sort.Strings(candidates)
	for _, c := range candidates {
		if c == name {
			continue
		}
		d := editDistance(name, c, bestDist+1)
		// Of names as near, the one of the same length wins: a
		// transposition is likelier than a dropped letter.
		if d < bestDist || d == bestDist && best != "" && lenDiff(c, name) < lenDiff(best, name) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

func lenDiff(a, b string) int { return max(len(a)-len(b), len(b)-len(a)) }

// editDistance is the Levenshtein distance of a and b, or limit when it
// is at least limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			low = min(low, cur[j])
		}
		if low >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// globalNames lists the names a bare identifier may resolve to.
func (c *Checker) globalNames(kinds ...IdentKind) []string {
	var names []string
	for name, id := range c.globals.idents {
		for _, k := range kinds {
			if id.Kind == k {
				names = append(names, name)
			}
		}
	}
	return names
}

// memberNames lists a struct's member names, through anonymous members.
func memberNames(s *types.Struct) []string {
	var names []string
	for _, m := range s.Members() {
		if m.Name != "" {
			names = append(names, m.Name)
		} else if in, ok := types.Resolve(m.Type).(*types.Struct); ok {
			names = append(names, memberNames(in)...)
		}
	}
	return names
}
