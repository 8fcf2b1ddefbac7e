package attach

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/ksym"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// blacklistText is BlacklistFile as Debian 6.1 shows it to root, and
// lines as other readers see them.
const blacklistText = `0xffffffff81a43dc0-0xffffffff81a43e70	do_syscall_64
0xffffffff810a1230-0xffffffff810a1260	notify_die
0x0000000000000000-0x0000000000000000	hidden
0xffffffffc0001000-0xffffffffc0001040	mod_fn [somemod]
`

func TestReadBlacklist(t *testing.T) {
	bl, err := ksym.ReadKprobeBlacklist(strings.NewReader(blacklistText))
	if err != nil {
		t.Fatal(err)
	}
	k := ksym.KernelModule
	want := []ksym.Name{{Module: k, Name: "do_syscall_64"}, {Module: k, Name: "notify_die"}, {Module: k, Name: "hidden"}, {Module: "somemod", Name: "mod_fn"}}
	if diff := cmp.Diff(want, bl); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := ksym.ReadKprobeBlacklist(strings.NewReader("ffff-0x10\tf\n")); err == nil {
		t.Error("a bad range was read")
	}
}

func TestCheckBlacklist(t *testing.T) {
	bl, err := ksym.ReadKprobeBlacklist(strings.NewReader(blacklistText))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		module, fn string
		off        uint64
		refused    bool
	}{
		{ksym.KernelModule, "do_syscall_64", 0, true},
		{ksym.KernelModule, "do_syscall_64", 0xaf, true},
		{"", "notify_die", 4, true},
		{ksym.KernelModule, "hidden", 0, true},
		{ksym.KernelModule, "do_int80_emulation", 0, false},
		{"somemod", "mod_fn", 0, true},
		{ksym.KernelModule, "mod_fn", 0, false}, // another module's
		{"othermod", "do_syscall_64", 0, false},
	}
	for _, tt := range tests {
		site := &probe.KernelSite{Module: tt.module, Function: tt.fn, Offset: tt.off}
		err := checkBlacklist(site, bl)
		var be *blacklistError
		if got := errors.As(err, &be); got != tt.refused {
			t.Errorf("%s:%s+%d: %v, want refused %v", tt.module, tt.fn, tt.off, err, tt.refused)
		}
	}
	want := "do_syscall_64 is on the kernel's kprobe blacklist (/sys/kernel/debug/kprobes/blacklist), which kprobes cannot probe: noinstr or entry code, or a function marked NOKPROBE_SYMBOL"
	if err := checkBlacklist(&probe.KernelSite{Function: "do_syscall_64"}, bl); err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}
