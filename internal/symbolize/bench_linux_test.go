//go:build linux

package symbolize_test

import (
	"testing"

	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/symbolize"
)

func liveTable(b *testing.B) *ksym.Table {
	tab, err := ksym.Kallsyms("/proc/kallsyms", "")
	if err != nil || tab.ZeroAddrs() {
		b.Skip("the kernel's addresses cannot be read")
	}
	return tab
}

// BenchmarkNewKernel indexes the running kernel's kallsyms by address.
func BenchmarkNewKernel(b *testing.B) {
	tab := liveTable(b)
	for b.Loop() {
		symbolize.NewKernel(tab, nil)
	}
}

// BenchmarkKernelLookup looks up addresses spread over the kernel's
// functions.
func BenchmarkKernelLookup(b *testing.B) {
	tab := liveTable(b)
	k := symbolize.NewKernel(tab, nil)
	var addrs []uint64
	for s := range tab.All() {
		if s.Func && len(addrs) < 4096 {
			addrs = append(addrs, s.Addr+s.Size/2)
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		k.Lookup(addrs[i%len(addrs)])
	}
}

// BenchmarkUserLookup looks up an address of libc in a process already
// read.
func BenchmarkUserLookup(b *testing.B) {
	f := startFixture(b)
	s := symbolize.New(symbolize.Config{})
	defer s.Close()
	if _, ok := s.User(f.pid(), f.addr["getppid"]); !ok {
		b.Fatal("getppid not found")
	}
	for b.Loop() {
		s.User(f.pid(), f.addr["getppid"]+1)
	}
}

// BenchmarkGrab reads a process's maps, its files cached.
func BenchmarkGrab(b *testing.B) {
	f := startFixture(b)
	s := symbolize.New(symbolize.Config{})
	defer s.Close()
	for b.Loop() {
		if err := s.Grab(int(f.pid())); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCold reads a process's maps and files and looks up an
// address of its executable and one of libc, nothing cached.
func BenchmarkCold(b *testing.B) {
	f := startFixture(b)
	for b.Loop() {
		s := symbolize.New(symbolize.Config{})
		if _, ok := s.User(f.pid(), f.addr["leaf"]); !ok {
			b.Fatal("leaf not found")
		}
		if _, ok := s.User(f.pid(), f.addr["getppid"]); !ok {
			b.Fatal("getppid not found")
		}
		s.Close()
	}
}
