package attach

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestSyscallTable(t *testing.T) {
	tests := []struct {
		name string
		nr   int
	}{
		{"read", 0},
		{"newstat", 4}, // stat(2), named by its entry point sys_newstat
		{"sendfile64", 40},
		{"getppid", 110},
		{"umount", 166}, // umount2(2)
		{"openat", 257},
		{"newfstatat", 262},
		{"clone3", 435},
	}
	for _, tt := range tests {
		if nr, ok := SyscallNumber(tt.name); !ok || nr != tt.nr {
			t.Errorf("SyscallNumber(%q) = %d, %v; want %d", tt.name, nr, ok, tt.nr)
		}
		if name, ok := syscallName(tt.nr); !ok || name != tt.name {
			t.Errorf("SyscallName(%d) = %q, %v; want %q", tt.nr, name, ok, tt.name)
		}
	}
	for _, name := range []string{"stat", "", "sys_read", "nosuchcall"} {
		if nr, ok := SyscallNumber(name); ok {
			t.Errorf("SyscallNumber(%q) = %d, want none", name, nr)
		}
	}
	for _, nr := range []int{-1, 400, 100000} {
		if name, ok := syscallName(nr); ok {
			t.Errorf("SyscallName(%d) = %q, want none", nr, name)
		}
	}
	// Every call is found by its name, and SyscallNames lists each
	// once, sorted.
	n := 0
	for nr, name := range syscallNames {
		if name == "" {
			continue
		}
		n++
		if got, ok := SyscallNumber(name); !ok || got != nr {
			t.Errorf("SyscallNumber(%q) = %d, %v; want %d", name, got, ok, nr)
		}
	}
	names := SyscallNames()
	if len(names) != n || !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != n {
		t.Errorf("SyscallNames: %d names, sorted %t; want %d sorted and unique", len(names), slices.IsSorted(names), n)
	}
}

// TestSyscallHeader checks the table against the C library's header,
// where there is one: every call it numbers has that number here, under
// its name or its entry point's.
func TestSyscallHeader(t *testing.T) {
	const header = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
	f, err := os.Open(header)
	if err != nil {
		t.Skipf("no %s: %v", header, err)
	}
	defer f.Close()
	entryPoints := map[string]string{"stat": "newstat", "fstat": "newfstat", "lstat": "newlstat",
		"uname": "newuname", "sendfile": "sendfile64", "umount2": "umount"}
	def := regexp.MustCompile(`^#define __NR_(\w+) (\d+)$`)
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := def.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name, want := m[1], m[2]
		if ep, ok := entryPoints[name]; ok {
			name = ep
		}
		if nr, ok := SyscallNumber(name); !ok || strconv.Itoa(nr) != want {
			t.Errorf("SyscallNumber(%q) = %d, %v; %s says %s", name, nr, ok, header, want)
		}
		n++
	}
	if n < 300 {
		t.Errorf("%s numbers only %d calls", header, n)
	}
}

// TestSyscallTracepoints checks that every system call the running
// kernel has a tracepoint for, as the syscall provider lists them, has a
// number.
func TestSyscallTracepoints(t *testing.T) {
	var ents []os.DirEntry
	for _, dir := range tracefsDirs {
		if ents, _ = os.ReadDir(dir + "/events/syscalls"); len(ents) > 0 {
			break
		}
	}
	if len(ents) == 0 {
		t.Skip("no syscall tracepoints in tracefs (not mounted, or not root)")
	}
	for _, e := range ents {
		if name, ok := strings.CutPrefix(e.Name(), "sys_enter_"); ok {
			if _, ok := SyscallNumber(name); !ok {
				t.Errorf("the kernel traces system call %s, which has no number here", name)
			}
		}
	}
}
