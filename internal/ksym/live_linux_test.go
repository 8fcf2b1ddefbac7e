//go:build linux

package ksym_test

import (
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/kdtrace/kdtrace/dlang/diag"
	"github.com/kdtrace/kdtrace/internal/amd64"
	"github.com/kdtrace/kdtrace/internal/btf"
	"github.com/kdtrace/kdtrace/internal/ksym"
)

// liveResolver resolves the running kernel's symbols, typed by its BTF,
// skipping the test where the kernel hides its addresses.
func liveResolver(t *testing.T) (*ksym.Resolver, *ksym.Table) {
	t.Helper()
	r := &ksym.Resolver{Load: func() (*ksym.Table, error) { return ksym.Kallsyms("/proc/kallsyms", "/proc/kcore") }}
	tab, err := r.Table()
	if err != nil {
		t.Skipf("the kernel's symbols cannot be read: %v", err)
	}
	if tab.ZeroAddrs() {
		t.Skip("/proc/kallsyms shows zero addresses: run as root, or with kptr_restrict 0")
	}
	if k, err := btf.Kernel(); err == nil {
		r.Types = func(mod string) ([]ksym.VarTypes, error) {
			if mod == ksym.KernelModule {
				return []ksym.VarTypes{k}, nil
			}
			return nil, nil
		}
	}
	return r, tab
}

func TestLiveSymbols(t *testing.T) {
	r, tab := liveResolver(t)
	t.Logf("%d symbols in %d modules", tab.Len(), len(tab.Modules()))
	s, err := tab.Lookup("", "vfs_read")
	if err != nil {
		t.Fatal(err)
	}
	if !s[0].Func || s[0].Module != ksym.KernelModule || s[0].Addr>>47 == 0 || s[0].Size == 0 || s[0].Size > 1<<16 {
		t.Errorf("vfs_read: %+v", s[0])
	}
	if _, err := compile(r, "BEGIN { trace((uint64_t)&`vfs_read); trace((uint64_t)&vmlinux`vfs_read); }"); err != nil {
		t.Errorf("`vfs_read: %v", err)
	}
	// BTF types the per-CPU variables, kallsyms or not.
	if r.Types != nil {
		ks, err := r.Symbol("", "runqueues")
		if err != nil || !ks.PerCPU || ks.Type == nil {
			t.Errorf("`runqueues: %+v, %v; want a typed per-CPU variable", ks, err)
		}
	}
	// max_pfn is data: kallsyms lists it only with CONFIG_KALLSYMS_ALL,
	// and BTF types it only where pahole encoded every global.
	ks, err := r.Symbol("", "max_pfn")
	switch {
	case errors.Is(err, ksym.ErrUnknownSymbol):
		t.Skip("`max_pfn: kallsyms lists no data (no CONFIG_KALLSYMS_ALL) and BTF has no VAR for it")
	case err != nil:
		t.Fatal(err)
	}
	src := "BEGIN { trace(*(unsigned long *)&`max_pfn); }"
	if ks.Type != nil {
		src = "BEGIN { trace(`max_pfn); trace(*&`max_pfn); }"
	}
	_, err = compile(r, src)
	var de *diag.Error
	switch {
	case !ks.HasAddr && errors.As(err, &de) && de.Tag == diag.D_UNKNOWN:
		t.Logf("`max_pfn is typed %v but kallsyms has no address: %v", ks.Type, err)
	case err != nil:
		t.Errorf("%s: %v", src, err)
	}
}

func TestLiveKcore(t *testing.T) {
	_, tab := liveResolver(t)
	s, err := tab.Lookup("", "vfs_read")
	if err != nil {
		t.Fatal(err)
	}
	code, err := tab.Code(s[0])
	if errors.Is(err, fs.ErrNotExist) || os.IsPermission(err) {
		t.Skipf("the kernel's code cannot be read: %v", err)
	}
	if err != nil {
		if _, serr := os.Stat("/proc/kcore"); serr != nil {
			t.Skipf("the kernel's code cannot be read: %v", err)
		}
		t.Fatal(err)
	}
	f, err := amd64.NewFunction(code, s[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckOffset(0); err != nil {
		t.Error(err)
	}
	t.Logf("vfs_read: %d bytes, %d instructions", len(code), len(f.Insts))
}
