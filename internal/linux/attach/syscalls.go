package attach

import (
	"slices"
	"strings"
)

//go:generate go run gensyscalls.go

// SyscallNumber returns the x86-64 number of the system call called
// name, as the syscall provider and the kernel's tracepoints name it
// ("newfstatat", "newstat" for stat(2)).
func SyscallNumber(name string) (int, bool) {
	i, ok := slices.BinarySearchFunc(syscallsByName[:], name, func(nr uint16, name string) int {
		return strings.Compare(syscallNames[nr], name)
	})
	if !ok {
		return 0, false
	}
	return int(syscallsByName[i]), true
}

// SyscallNames returns the names of the x86-64 system calls, as
// SyscallNumber takes them, sorted.
func SyscallNames() []string {
	names := make([]string, len(syscallsByName))
	for i, nr := range syscallsByName {
		names[i] = syscallNames[nr]
	}
	return names
}

// syscallName returns the name of x86-64 system call nr, as
// SyscallNumber takes it.
func syscallName(nr int) (string, bool) {
	if nr < 0 || nr >= len(syscallNames) || syscallNames[nr] == "" {
		return "", false
	}
	return syscallNames[nr], true
}
