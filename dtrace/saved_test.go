package dtrace

import (
	"errors"
	"testing"
)

func TestBuildIDError(t *testing.T) {
	for _, c := range []struct {
		e    BuildIDError
		want string
	}{
		{BuildIDError{"a.dof", "vmlinux", "aa", "bb", 0}, "a.dof was compiled for vmlinux build-id aa, but the running kernel has build-id bb"},
		{BuildIDError{"a.dof", "ext4", "aa", "bb", 0}, "a.dof was compiled for ext4 build-id aa, but the running module ext4 has build-id bb"},
		{BuildIDError{"a.dof", "libc.so.6", "aa", "bb", 42}, "a.dof was compiled for libc.so.6 build-id aa, but process 42's libc.so.6 has build-id bb"},
	} {
		var err error = &c.e
		var be *BuildIDError
		if err.Error() != c.want || !errors.As(err, &be) {
			t.Errorf("%+v: %q, want %q", c.e, err.Error(), c.want)
		}
	}
}

func TestModuleName(t *testing.T) {
	for path, want := range map[string]string{
		"/lib/modules/6.1/kernel/fs/ext4/ext4.ko":         "ext4",
		"/usr/lib/debug/lib/modules/6.1/snd-hda-intel.ko": "snd_hda_intel",
		"nf_tables.ko.xz": "nf_tables",
	} {
		if got := moduleName(path); got != want {
			t.Errorf("moduleName(%s) = %q, want %q", path, got, want)
		}
	}
}
