package attach

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kdtrace/kdtrace/ksym"
	"github.com/kdtrace/kdtrace/probe"
)

// BlacklistFile lists the code the kernel refuses kprobes on: functions
// marked NOKPROBE_SYMBOL, and every function of the noinstr, entry and
// __kprobes text. Only root reads its addresses.
const BlacklistFile = "/sys/kernel/debug/kprobes/blacklist"

// A blacklisted function is one line of BlacklistFile. The kernel lists
// each function of a blacklisted area (noinstr text, say) on a line of
// its own, so a site is blacklisted when its function is.
type blacklisted struct {
	name   string
	module string // "" for the kernel's own
}

// readBlacklist parses BlacklistFile's lines, "0xLO-0xHI\tname" with an
// optional "[module]". The addresses are left: readers other than root
// see zeros, and the name is what a site gives.
func readBlacklist(r io.Reader) ([]blacklisted, error) {
	var out []blacklisted
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		if !strings.HasPrefix(f[0], "0x") || !strings.Contains(f[0], "-") {
			return nil, fmt.Errorf("%s: bad range %q", BlacklistFile, f[0])
		}
		b := blacklisted{name: f[1]}
		if len(f) > 2 {
			b.module = strings.Trim(f[2], "[]")
		}
		out = append(out, b)
	}
	return out, sc.Err()
}

// kernelBlacklist reads the running kernel's blacklist; none when it
// cannot be read (no debugfs): the kernel still refuses, in its words.
func kernelBlacklist() []blacklisted {
	f, err := os.Open(BlacklistFile)
	if err != nil {
		return nil
	}
	defer f.Close()
	bl, _ := readBlacklist(f)
	return bl
}

// A BlacklistError is a site the kernel would refuse a kprobe at, as
// its kprobe blacklist holds the function.
type BlacklistError struct {
	Function string
}

func (e *BlacklistError) Error() string {
	return fmt.Sprintf("%s is on the kernel's kprobe blacklist (%s), which kprobes cannot probe: noinstr or entry code, or a function marked NOKPROBE_SYMBOL", e.Function, BlacklistFile)
}

// checkBlacklist refuses a site in a blacklisted function.
func checkBlacklist(s *probe.KernelSite, bl []blacklisted) error {
	module := s.Module
	if module == ksym.KernelModule {
		module = ""
	}
	for _, b := range bl {
		if b.name == s.Function && b.module == module {
			return &BlacklistError{Function: s.Function}
		}
	}
	return nil
}
