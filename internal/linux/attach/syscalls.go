package attach

import "slices"

//go:generate go run gensyscalls.go

// SyscallNumber returns the x86-64 number of the system call called
// name, as the syscall provider and the kernel's tracepoints name it
// ("newfstatat", "newstat" for stat(2)).
func SyscallNumber(name string) (int, bool) {
	nr, ok := syscallNumbers[name]
	return nr, ok
}

// SyscallNames returns the names of the x86-64 system calls, as
// SyscallNumber takes them, sorted.
func SyscallNames() []string {
	names := make([]string, 0, len(syscallNumbers))
	for name := range syscallNumbers {
		names = append(names, name)
	}
	slices.Sort(names)
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

var syscallNumbers = func() map[string]int {
	m := make(map[string]int, len(syscallNames))
	for nr, name := range syscallNames {
		if name != "" {
			m[name] = nr
		}
	}
	return m
}()
