package ksym

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// kallsymsText is a kallsyms file in the running kernel's form: text
// and data of the kernel, two static functions of one name, and a
// module's symbols.
const kallsymsText = `ffffffff81000000 T _stext
ffffffff816d5b70 T vfs_read
ffffffff816d5d40 T vfs_write
ffffffff816d6000 t do_thing
ffffffff816d6100 t do_thing
ffffffff816d6200 T vfs_last
ffffffff82400000 D __start_rodata
ffffffff82612340 R linux_banner
ffffffff83100000 B max_pfn
ffffffffc0a1b000 t ext4_file_open	[ext4]
ffffffffc0a1b080 t ext4_release_file	[ext4]
ffffffffc0a2c000 d ext4_file_operations	[ext4]
ffffffffc0b00000 T do_thing	[xfs]
`

func mustKallsyms(t *testing.T, text string) *Table {
	t.Helper()
	tab, err := ReadKallsyms(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestKallsymsLookup(t *testing.T) {
	tab := mustKallsyms(t, kallsymsText)
	tests := []struct {
		mod, name string
		want      []Symbol
		err       error
	}{
		{"", "vfs_read", []Symbol{{Name: "vfs_read", Module: "vmlinux", Addr: 0xffffffff816d5b70, Size: 0x1d0, Padded: true, Func: true}}, nil},
		{"vmlinux", "linux_banner", []Symbol{{Name: "linux_banner", Module: "vmlinux", Addr: 0xffffffff82612340, Size: 0xaedcc0, Padded: true}}, nil},
		// The last symbol of a module has no next one: no size.
		{"", "max_pfn", []Symbol{{Name: "max_pfn", Module: "vmlinux", Addr: 0xffffffff83100000}}, nil},
		{"ext4", "ext4_file_open", []Symbol{{Name: "ext4_file_open", Module: "ext4", Addr: 0xffffffffc0a1b000, Size: 0x80, Padded: true, Func: true}}, nil},
		{"", "ext4_file_operations", []Symbol{{Name: "ext4_file_operations", Module: "ext4", Addr: 0xffffffffc0a2c000}}, nil},
		// Every symbol of the name, the kernel's first.
		{"", "do_thing", []Symbol{
			{Name: "do_thing", Module: "vmlinux", Addr: 0xffffffff816d6000, Size: 0x100, Padded: true, Func: true},
			{Name: "do_thing", Module: "vmlinux", Addr: 0xffffffff816d6100, Size: 0x100, Padded: true, Func: true},
			{Name: "do_thing", Module: "xfs", Addr: 0xffffffffc0b00000, Func: true},
		}, nil},
		{"xfs", "do_thing", []Symbol{{Name: "do_thing", Module: "xfs", Addr: 0xffffffffc0b00000, Func: true}}, nil},
		{"ext4", "vfs_read", nil, ErrUnknownSymbol},
		{"", "nosuch", nil, ErrUnknownSymbol},
		{"nosuchmod", "vfs_read", nil, errUnknownModule},
	}
	for _, tt := range tests {
		got, err := tab.Lookup(tt.mod, tt.name)
		if !errors.Is(err, tt.err) {
			t.Errorf("Lookup(%q, %q): error %v, want %v", tt.mod, tt.name, err, tt.err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Lookup(%q, %q) (-want +got):\n%s", tt.mod, tt.name, diff)
		}
	}
	if got, want := tab.Modules(), []string{"vmlinux", "ext4", "xfs"}; !cmp.Equal(got, want) {
		t.Errorf("Modules() = %q, want %q", got, want)
	}
	if tab.ZeroAddrs() {
		t.Error("ZeroAddrs() = true for a table with addresses")
	}
}

func TestKallsymsHidden(t *testing.T) {
	// What a user the kernel does not trust reads.
	tab := mustKallsyms(t, "0000000000000000 T vfs_read\n0000000000000000 T vfs_write\n")
	if !tab.ZeroAddrs() {
		t.Fatal("ZeroAddrs() = false for a table of zero addresses")
	}
	s, err := tab.Lookup("", "vfs_read")
	if err != nil {
		t.Fatal(err)
	}
	if s[0].Size != 0 {
		t.Errorf("size %d from hidden addresses", s[0].Size)
	}
	if _, err := tab.Code(s[0]); err == nil {
		t.Error("Code of a table without text succeeded")
	}
}

func TestKallsymsErrors(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"ffffffff81000000 T _stext\nnot a line\n", "line 2: not a kallsyms line"},
		{"ffffffff81000000 T x\t[ext4\n", "line 1: bad module field"},
		{"ffffffff81000000 T \n", "line 1: no symbol name"},
	} {
		_, err := ReadKallsyms(strings.NewReader(tt.text))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want %q", tt.text, err, tt.want)
		}
	}
}
