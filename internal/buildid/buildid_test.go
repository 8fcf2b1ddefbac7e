package buildid

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
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

func TestNote(t *testing.T) {
	id := []byte{0xeb, 0x4f, 0xbc, 0xd0, 0x37}
	for _, c := range []struct {
		name  string
		notes []byte
		want  string
	}{
		{"alone", note("GNU", 3, id), "eb4fbcd037"},
		// A kernel's notes: Xen's first, one of type 3 too.
		{"after Xen's", append(append(note("Xen", 6, []byte("linux\x00")), note("Xen", 3, []byte{1, 2, 3, 4, 5, 6, 7, 8})...), note("GNU", 3, id)...), "eb4fbcd037"},
		{"another GNU note", note("GNU", 1, id), ""},
		{"empty", note("GNU", 3, nil), ""},
		{"truncated", note("GNU", 3, id)[:18], ""},
		{"name past the end", note("GNU", 3, id)[:14], ""},
		{"none", nil, ""},
	} {
		if got := hex.EncodeToString(Note(c.notes, binary.LittleEndian)); got != c.want {
			t.Errorf("%s: Note = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPath(t *testing.T) {
	got, err := Path(filepath.Join("..", "..", "examples", "kinst", "demo"))
	if want := "69d9a71761894b585adbf7ba2654e65b2dd766f3"; err != nil || got != want {
		t.Errorf("Path(demo) = %q, %v; want %q", got, err, want)
	}
	if _, err := Path(filepath.Join("..", "..", "examples", "kinst", "demo.d")); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("Path of a D script: %v, want debug/elf's error", err)
	}
	if _, err := Path(filepath.Join("..", "..", "examples", "kinst", "nosuch")); err == nil || errors.Is(err, ErrNone) {
		t.Errorf("Path of no file: %v", err)
	}
}

// TestRunning reads the kernel's and a module's build-ids from a
// /sys of the test's.
func TestRunning(t *testing.T) {
	root := t.TempDir()
	if _, err := Running(root, "vmlinux"); err == nil {
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
		got, err := Running(root, c.image)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && err.Error() != c.err {
			t.Errorf("Running(%s) = %q, %v; want %q, %q", c.image, got, err, c.want, c.err)
		}
	}
}
