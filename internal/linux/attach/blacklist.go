package attach

import (
	"fmt"
	"os"

	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// blacklistFile lists the code the kernel refuses kprobes on: functions
// marked NOKPROBE_SYMBOL, and every function of the noinstr, entry and
// __kprobes text. Only root reads its addresses. The kernel lists each
// function of a blacklisted area (noinstr text, say) on a line of its
// own, so a site is blacklisted when its function is.
const blacklistFile = ksym.KprobeBlacklist

// kernelBlacklist reads the running kernel's blacklist; none when it
// cannot be read (no debugfs): the kernel still refuses, in its words.
func kernelBlacklist() []ksym.Name {
	f, err := os.Open(blacklistFile)
	if err != nil {
		return nil
	}
	defer f.Close()
	bl, _ := ksym.ReadKprobeBlacklist(f)
	return bl
}

// A BlacklistError is a site the kernel would refuse a kprobe at, as
// its kprobe blacklist holds the function.
type blacklistError struct {
	Function string
}

func (e *blacklistError) Error() string {
	return fmt.Sprintf("%s is on the kernel's kprobe blacklist (%s), which kprobes cannot probe: noinstr or entry code, or a function marked NOKPROBE_SYMBOL", e.Function, blacklistFile)
}

// checkBlacklist refuses a site in a blacklisted function.
func checkBlacklist(s *probe.KernelSite, bl []ksym.Name) error {
	module := s.Module
	if module == "" {
		module = ksym.KernelModule
	}
	for _, b := range bl {
		if b.Name == s.Function && b.Module == module {
			return &blacklistError{Function: s.Function}
		}
	}
	return nil
}
