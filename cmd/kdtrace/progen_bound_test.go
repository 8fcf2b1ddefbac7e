package main

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// instructionBound returns, for the function fn of the program
// command, how many of its calls instruction probes can count at most:
// the sum, over the functions holding its code (the callers of its
// inline copies, its out-of-line body and its clones), of the most
// times any one of their instructions ran. kdtrace traces every
// instruction of those functions to find it. When the bound is below
// the calls the program made, no placement of probes on instructions
// counts them: the compiler evaluated a loop of calls in closed form,
// leaving no instruction that runs once per call.
func instructionBound(bin, cache, command string, holders []string) (int, error) {
	var clauses []string
	for _, h := range holders {
		clauses = append(clauses, fmt.Sprintf("pid$target:a.out:%s: { @n[probefunc, probename] = count(); }", h))
	}
	script := strings.Join(clauses, "\n") + "\nEND { printa(\"bound %s %s %@d\\n\", @n); }\n"
	stdout, stderr, err := runKdtrace(bin, cache, "-q", "-c", command, "-n", script)
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, stderr)
	}
	most := map[string]int{}
	for _, m := range boundLine.FindAllStringSubmatch(string(stdout), -1) {
		n, _ := strconv.Atoi(m[3])
		most[m[1]] = max(most[m[1]], n)
	}
	sum := 0
	for _, h := range holders {
		sum += most[h]
	}
	return sum, nil
}

var boundLine = regexp.MustCompile(`(?m)^bound (\S+) (\S+) (\d+)$`)

// holdersOf returns the functions that hold fn's code in a build: the
// callers of its inline copies, and fn itself and its clones when they
// have bodies of their own.
func holdersOf(callers, bodies []string) []string {
	h := append(slices.Clone(callers), bodies...)
	slices.Sort(h)
	return slices.Compact(h)
}
