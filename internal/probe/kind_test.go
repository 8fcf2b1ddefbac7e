package probe

import (
	"errors"
	"testing"
)

func TestFrame(t *testing.T) {
	tests := []struct {
		p    *Probe
		want string // "" for nil
	}{
		{&Probe{Provider: "kinst", Detail: &KernelSite{Function: "vfs_read", Offset: 4}}, ""},
		{&Probe{Provider: "fbt", Detail: &KernelSite{Function: "vfs_read"}}, ErrNoFrame.Error()},
		{&Probe{Provider: "pid1", Detail: &UserSite{Addr: 0x1000}}, ""},
		{&Probe{Provider: "pid1", Detail: &UserSite{Addr: 0x1000, Offset: 3}}, ""},
		{&Probe{Provider: "pid1", Detail: &UserSite{Addr: 0x1000, Return: true}}, "a return probe fires once the function's frame is gone"},
		{&Probe{Provider: "pid1", Detail: &UserSite{Offset: 0x1234}}, ErrNoFrame.Error()}, // function "-"
		{&Probe{Provider: "syscall", Detail: &Syscall{Name: "read"}}, ErrNoFrame.Error()},
		{&Probe{Provider: "dtrace", Detail: &Run{}}, ErrNoFrame.Error()},
	}
	for _, tt := range tests {
		err := tt.p.Frame()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s %#v: Frame() = %q, want %q", tt.p.Provider, tt.p.Detail, got, tt.want)
		}
		if tt.want == ErrNoFrame.Error() && !errors.Is(err, ErrNoFrame) {
			t.Errorf("%s %#v: Frame() = %v, not ErrNoFrame", tt.p.Provider, tt.p.Detail, err)
		}
	}
}
