//go:build linux

package ksym

import (
	"os"
	"testing"
)

// BenchmarkKallsyms reads and parses the running kernel's kallsyms: the
// cost of a program's first backquoted symbol.
func BenchmarkKallsyms(b *testing.B) {
	if _, err := os.Stat("/proc/kallsyms"); err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if _, err := Kallsyms("/proc/kallsyms", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseKallsyms parses kallsyms already read.
func BenchmarkParseKallsyms(b *testing.B) {
	data, err := readProc("/proc/kallsyms")
	if err != nil {
		b.Skip(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := parseKallsyms(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup finds a symbol by name, by scanning and once indexed.
func BenchmarkLookup(b *testing.B) {
	data, err := readProc("/proc/kallsyms")
	if err != nil {
		b.Skip(err)
	}
	t, err := parseKallsyms(data)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			t.mu.Lock()
			t.lookups = 0
			t.mu.Unlock()
			t.Lookup("", "vfs_read")
		}
	})
	b.Run("indexed", func(b *testing.B) {
		for range scanLookups + 1 {
			t.Lookup("", "vfs_read")
		}
		for b.Loop() {
			t.Lookup("", "vfs_read")
		}
	})
}
