package attach

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cilium/ebpf/link"
	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/probe"
)

func TestKprobeOptions(t *testing.T) {
	tests := []struct {
		site   probe.KernelSite
		cookie uint64
		sym    string
		opts   link.KprobeOptions
		name   string
	}{
		{probe.KernelSite{Module: "vmlinux", Function: "vfs_read"}, 0, "vfs_read", link.KprobeOptions{}, "vfs_read"},
		{probe.KernelSite{Module: "vmlinux", Function: "vfs_read", Return: true}, 1, "vfs_read", link.KprobeOptions{Cookie: 1}, "vfs_read:return"},
		{probe.KernelSite{Module: "vmlinux", Function: "vfs_read", Offset: 12}, 7, "vfs_read", link.KprobeOptions{Offset: 12, Cookie: 7}, "vfs_read+12"},
		{probe.KernelSite{Module: "ext4", Function: "ext4_file_read_iter", Offset: 5}, 2, "ext4_file_read_iter", link.KprobeOptions{Offset: 5, Cookie: 2}, "ext4_file_read_iter+5"},
	}
	for _, tt := range tests {
		sym, opts := kprobeOptions(&tt.site, tt.cookie)
		if sym != tt.sym {
			t.Errorf("%+v: symbol %q, want %q", tt.site, sym, tt.sym)
		}
		if diff := cmp.Diff(tt.opts, *opts); diff != "" {
			t.Errorf("%+v: options (-want +got):\n%s", tt.site, diff)
		}
		if name := kernelSiteName(&tt.site); name != tt.name {
			t.Errorf("%+v: named %q, want %q", tt.site, name, tt.name)
		}
	}
}

// TestKprobeBoundary checks kinst offsets against a function's code, as
// the running kernel's would be read, here from an image's file.
func TestKprobeBoundary(t *testing.T) {
	path := buildFixture(t, false)
	text, err := ksym.ReadELF(path)
	if err != nil {
		t.Fatal(err)
	}
	sym, insts := function(t, path, "work")
	mid, below, above := midInstruction(t, sym, insts)
	site := func(off uint64, ret bool) *probe.KernelSite {
		return &probe.KernelSite{Module: ksym.KernelModule, Function: "work", Offset: off, Return: ret}
	}

	for _, in := range insts {
		if err := checkKernelSite(site(in.Addr-sym.Value, false), text); err != nil {
			t.Errorf("offset %d: %v", in.Addr-sym.Value, err)
		}
	}
	if err := checkKernelSite(site(mid, false), nil); err != nil {
		t.Errorf("offset %d without text: %v", mid, err)
	}

	sites := []*probe.KernelSite{site(0, false), site(mid, false)}
	_, err = Kprobes(nil, sites, []uint64{0, 1}, text)
	var se *siteError
	var be *boundaryError
	if !errors.As(err, &se) || se.Index != 1 || !errors.As(err, &be) {
		t.Fatalf("Kprobes at work+%d = %v, want a boundary error for site 1", mid, err)
	}
	want := fmt.Sprintf("work+%d: offset %d is not an instruction boundary (nearest boundaries: %d and %d)", mid, mid, below, above)
	if err.Error() != want {
		t.Errorf("Kprobes at work+%d:\n got %s\nwant %s", mid, err, want)
	}

	for _, tt := range []struct {
		site *probe.KernelSite
		want string
	}{
		{site(sym.Size+3, false), fmt.Sprintf("offset %d is past the end of the function (size %d)", sym.Size+3, sym.Size)},
		{site(4, true), "a return probe goes on a function's entry, not at an offset"},
		{&probe.KernelSite{Module: ksym.KernelModule, Function: "nosuch", Offset: 3}, "cannot check offset 3: Unknown symbol name"},
	} {
		if err := checkKernelSite(tt.site, text); err == nil || err.Error() != tt.want {
			t.Errorf("%+v: %v, want %q", tt.site, err, tt.want)
		}
	}
}

// TestKprobesUnavailable checks the sentence a kernel without kprobes,
// as the development machines', gives.
func TestKprobesUnavailable(t *testing.T) {
	want := HaveKprobes()
	if want == nil {
		t.Skip("this kernel has kprobes")
	}
	sites := []*probe.KernelSite{{Module: "vmlinux", Function: "vfs_read", Offset: 0}}
	_, err := Kprobes(nil, sites, []uint64{0}, nil)
	if err == nil || err.Error() != want.Error() {
		t.Fatalf("Kprobes = %v, want %v", err, want)
	}
	if configSays("CONFIG_KPROBES") == "n" {
		const sentence = "this kernel cannot probe kernel instructions: it has no kprobes (CONFIG_KPROBES is not set)"
		if err.Error() != sentence {
			t.Errorf("Kprobes = %v, want %q", err, sentence)
		}
	}
}
