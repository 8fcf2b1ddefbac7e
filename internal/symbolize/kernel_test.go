package symbolize_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/consumer"
	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/symbolize"
)

// kallsyms is a kernel's table as /proc/kallsyms lists it: the kernel's
// symbols sorted, then a module's, then BPF programs'.
const kallsyms = `ffffffff81000000 T srso_alias_untrain_ret
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81000040 T __pfx_vfs_read
ffffffff81000050 T vfs_read
ffffffff81000050 T __vfs_read_alias
ffffffff81000360 t do_thing
ffffffff81000400 W weak_fn
ffffffff81000480 T _etext
ffffffff82400000 D __start_rodata
ffffffff82500000 D linux_banner
ffffffff82500100 D __stop_banner
ffffffffc0a00000 t ext4_file_open	[ext4]
ffffffffc0a00100 T ext4_read	[ext4]
ffffffffc0b00000 t bpf_prog_6deef7357e7b4530_sd_fw	[bpf]
ffffffffc0b00800 t bpf_prog_aaaa_other	[bpf]
`

func kernelTable(t *testing.T, mods []symbolize.Module) *symbolize.Kernel {
	t.Helper()
	tab, err := ksym.ReadKallsyms(strings.NewReader(kallsyms))
	if err != nil {
		t.Fatal(err)
	}
	return symbolize.NewKernel(tab, mods)
}

// format prints a lookup as dtrace's stack() prints a frame.
func format(s consumer.Symbol, ok bool, addr uint64) string {
	switch {
	case !ok:
		return "-"
	case s.Name == "":
		return s.Object + "`" + hex(addr)
	case addr > s.Value:
		return s.Object + "`" + s.Name + "+" + hex(addr-s.Value)
	}
	return s.Object + "`" + s.Name
}

func hex(v uint64) string { return fmt.Sprintf("%#x", v) }

func TestKernelLookup(t *testing.T) {
	mods := []symbolize.Module{{Name: "ext4", Addr: 0xffffffffc0a00000, Size: 0x1000}}
	k := kernelTable(t, mods)
	tests := []struct {
		addr uint64
		want string
	}{
		{0xffffffff81000000, "kernel`srso_alias_untrain_ret"}, // a function over the markers at its address
		{0xffffffff81000010, "kernel`srso_alias_untrain_ret+0x10"},
		{0xffffffff81000048, "kernel`__pfx_vfs_read+0x8"},
		{0xffffffff81000050, "kernel`vfs_read"}, // fewer leading underscores
		{0xffffffff81000062, "kernel`vfs_read+0x12"},
		{0xffffffff8100035f, "kernel`vfs_read+0x30f"},
		{0xffffffff81000360, "kernel`do_thing"},
		{0xffffffff81000410, "kernel`weak_fn+0x10"},
		{0xffffffff81000480, "kernel`_etext"},
		{0xffffffff81000481, "kernel`0xffffffff81000481"}, // past _etext: in the kernel, in no function
		{0xffffffff82400010, "kernel`0xffffffff82400010"},
		{0xffffffff82500008, "kernel`linux_banner+0x8"},
		{0xffffffff82500100, "kernel`__stop_banner"},
		{0xffffffff82500101, "-"}, // past the kernel's last symbol
		{0xffffffff80000000, "-"}, // below every symbol
		{0xffffffffc0a00004, "ext4`ext4_file_open+0x4"},
		{0xffffffffc0a00ff0, "ext4`ext4_read+0xef0"}, // the module's last symbol runs to its end
		{0xffffffffc0a01000, "-"},
		{0xffffffffc0b00010, "bpf`bpf_prog_6deef7357e7b4530_sd_fw+0x10"},
		{0xffffffffc0b00800, "bpf`bpf_prog_aaaa_other"},
		{0xffffffffc0b00801, "-"}, // the last BPF program's size is unknown
		{0xffffffffffffffff, "-"},
		{0, "-"},
	}
	for _, tt := range tests {
		s, ok := k.Lookup(tt.addr)
		if got := format(s, ok, tt.addr); got != tt.want {
			t.Errorf("Lookup(%#x) = %s, want %s", tt.addr, got, tt.want)
		}
	}
}

// TestKernelUnknownModuleExtent checks that without /proc/modules a
// module's last symbol holds its own address only.
func TestKernelUnknownModuleExtent(t *testing.T) {
	k := kernelTable(t, nil)
	for addr, want := range map[uint64]string{
		0xffffffffc0a00100: "ext4`ext4_read",
		0xffffffffc0a00101: "-",
		0xffffffffc0a000ff: "ext4`ext4_file_open+0xff",
	} {
		s, ok := k.Lookup(addr)
		if got := format(s, ok, addr); got != want {
			t.Errorf("Lookup(%#x) = %s, want %s", addr, got, want)
		}
	}
}

func TestKernelHiddenAddresses(t *testing.T) {
	tab, err := ksym.ReadKallsyms(strings.NewReader("0000000000000000 T vfs_read\n0000000000000000 T vfs_write\n"))
	if err != nil {
		t.Fatal(err)
	}
	k := symbolize.NewKernel(tab, nil)
	if s, ok := k.Lookup(0); ok || k.Len() != 0 {
		t.Errorf("a table of hidden addresses found %+v in %d symbols", s, k.Len())
	}
}

func TestReadModules(t *testing.T) {
	got, err := symbolize.ReadModules([]byte("ext4 1081344 2 - Live 0xffffffffc0a00000\nmbcache 16384 1 ext4, Live 0xffffffffc09f0000 (E)\nhidden 4096 0 - Live 0x0000000000000000\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []symbolize.Module{
		{Name: "ext4", Addr: 0xffffffffc0a00000, Size: 1081344},
		{Name: "mbcache", Addr: 0xffffffffc09f0000, Size: 16384},
		{Name: "hidden", Size: 4096},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadModules (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"ext4 1081344 2 -\n", "ext4 big 2 - Live 0x0\n", "ext4 1 2 - Live zz\n"} {
		if _, err := symbolize.ReadModules([]byte(bad)); err == nil {
			t.Errorf("ReadModules(%q) succeeded", bad)
		}
	}
}
