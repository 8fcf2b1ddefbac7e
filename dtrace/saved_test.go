package dtrace

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// note encodes one ELF note, little-endian.
func note(owner string, typ uint32, desc []byte) []byte {
	name := append([]byte(owner), 0)
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(name)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
	b = binary.LittleEndian.AppendUint32(b, typ)
	b = append(b, name...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = append(b, desc...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// TestRunningBuildID reads the kernel's and a module's build-ids from a
// /sys of the test's.
func TestRunningBuildID(t *testing.T) {
	root := t.TempDir()
	defer func(old string) { sysRoot = old }(sysRoot)
	sysRoot = root
	if _, err := runningBuildID("vmlinux"); err == nil {
		t.Error("no /sys/kernel/notes: no error")
	}
	write := func(path string, b []byte) {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("sys/kernel/notes", append(note("Xen", 6, []byte("linux\x00")), note("GNU", 3, []byte{0xab, 0xcd})...))
	write("sys/module/ext4/notes/.note.gnu.build-id", note("GNU", 3, []byte{0x01, 0x02}))
	write("sys/module/empty/notes/.note.gnu.build-id", nil)
	for _, c := range []struct{ image, want, err string }{
		{"vmlinux", "abcd", ""},
		{"ext4", "0102", ""},
		{"xfs", "", "module xfs is not loaded"},
		{"empty", "", filepath.Join(root, "sys/module/empty/notes/.note.gnu.build-id") + " holds no build-id"},
	} {
		got, err := runningBuildID(c.image)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Errorf("runningBuildID(%s) = %q, %v; want %q, %q", c.image, got, err, c.want, c.err)
		}
	}
}

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
