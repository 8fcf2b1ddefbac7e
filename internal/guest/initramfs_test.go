package guest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInitramfs lists an archive with busybox cpio, which reads the
// format as the kernel does: every entry, parents first, the contents
// and link targets whole.
func TestInitramfs(t *testing.T) {
	busybox, err := Available()
	if err != nil {
		t.Skip(err)
	}
	var fs Initramfs
	fs.File("bin/hello", []byte("odd-sized contents"), 0o755)
	fs.Symlink("bin/sh", "busybox")
	fs.Dir("tmp")
	fs.File("etc/a/b", nil, 0o644)
	var gz bytes.Buffer
	if _, err := fs.WriteTo(&gz); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", `gzip -dc | "$0" cpio -t -v`, busybox)
	cmd.Stdin = &gz
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("busybox cpio: %v\n%s", err, out)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// mode owner size date time name [-> target]
		f := strings.Fields(line)
		if len(f) < 6 {
			continue // busybox's block count
		}
		got = append(got, f[0]+" "+f[2]+" "+strings.Join(f[5:], " "))
	}
	want := []string{
		"drwxr-xr-x 0 bin",
		"-rwxr-xr-x 18 bin/hello",
		"lrwxrwxrwx 0 bin/sh -> busybox",
		"drwxr-xr-x 0 etc",
		"drwxr-xr-x 0 etc/a",
		"-rw-r--r-- 0 etc/a/b",
		"drwxr-xr-x 0 tmp",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("archive listing (-want +got):\n%s\nbusybox said:\n%s", d, out)
	}
}

func TestCut(t *testing.T) {
	const b, e = "BEGIN-1", "END-1"
	tests := []struct {
		console string
		out     string
		status  int
		ok      bool
	}{
		{"boot\n" + b + "\nline 1\nline 2\n" + e + " 0\n", "line 1\nline 2\n", 0, true},
		{"boot\n" + b + "\n" + e + " 3\n[ 9.1] reboot: Power down\n", "", 3, true},
		{"boot\n" + b + "\nline\n" + e + " 1\n", "line\n", 1, true},
		// The end sentinel must start a line and carry a status.
		{"boot\n" + b + "\nline " + e + " 0\n", "", 0, false},
		{"boot\n" + b + "\nline\n" + e + " \n", "", 0, false},
		// A panic before the script ends.
		{"boot\n" + b + "\nline\nKernel panic\n", "", 0, false},
		{"boot\nKernel panic\n", "", 0, false},
	}
	for _, tt := range tests {
		out, status, ok := cut(tt.console, b, e)
		if out != tt.out || status != tt.status || ok != tt.ok {
			t.Errorf("cut(%q) = %q, %d, %v, want %q, %d, %v", tt.console, out, status, ok, tt.out, tt.status, tt.ok)
		}
	}
}

// TestInitramfsUncompressed extracts an uncompressed archive of a host
// file, odd-sized so that the padding after it shows, with busybox cpio.
func TestInitramfsUncompressed(t *testing.T) {
	busybox, err := Available()
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	data := bytes.Repeat([]byte("0123456789"), 100001)[:1000003]
	if err := os.WriteFile(src, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var fs Initramfs
	if err := fs.HostFile("usr/lib/debug/boot/vmlinux", src, 0o644); err != nil {
		t.Fatal(err)
	}
	fs.File("after", []byte("x"), 0o644)
	var b bytes.Buffer
	n, err := fs.WriteUncompressed(&b)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(b.Len()) || n%4 != 0 {
		t.Errorf("wrote %d bytes, said %d; want a multiple of 4", b.Len(), n)
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(busybox, "cpio", "-i", "-d")
	cmd.Dir, cmd.Stdin = out, &b
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("busybox cpio: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(filepath.Join(out, "usr/lib/debug/boot/vmlinux"))
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("extracted %d bytes (%v), want the %d written", len(got), err, len(data))
	}
	if got, err := os.ReadFile(filepath.Join(out, "after")); err != nil || string(got) != "x" {
		t.Errorf("the entry after it: %q, %v", got, err)
	}
}

func TestPadTo4(t *testing.T) {
	for n := int64(0); n < 8; n++ {
		var b bytes.Buffer
		k, err := PadTo4(&b, n)
		if err != nil || k != int64(b.Len()) || (n+k)%4 != 0 || k > 3 {
			t.Errorf("PadTo4 after %d bytes wrote %d (%v)", n, k, err)
		}
	}
}
