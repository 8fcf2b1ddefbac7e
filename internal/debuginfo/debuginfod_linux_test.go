package debuginfo

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/debuginfod"
	"github.com/kdtrace/kdtrace/internal/debuginfod/debuginfodtest"
)

// TestKernelDebuginfod: on a system without the running kernel's debug
// files, Kernel asks debuginfod for the build-ids of /sys/kernel/notes
// and of each module's notes. (Two builds of the fixture program stand
// for the kernel and a module.)
func TestKernelDebuginfod(t *testing.T) {
	served := t.TempDir()
	_, kid := debuginfodtest.Fixture(t, t.TempDir(), served)
	modServed := t.TempDir()
	_, mid := debuginfodtest.Fixture(t, t.TempDir(), modServed)
	if err := os.Rename(filepath.Join(modServed, "loop.debug"), filepath.Join(served, "mod.debug")); err != nil {
		t.Fatal(err)
	}
	const release = "6.1.0-56-amd64"
	sysroot := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(sysroot, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("proc/sys/kernel/osrelease", []byte(release+"\n"))
	write("proc/modules", []byte("fakemod 16384 0 - Live 0xffffffffc0347000\n"))
	write("sys/kernel/notes", buildIDNote(t, kid))
	write("sys/module/fakemod/notes/.note.gnu.build-id", buildIDNote(t, mid))
	opts := Options{DebugRoot: t.TempDir(), NoCache: true}
	if s, err := kernelAt(sysroot, opts); err == nil {
		s.Close()
		t.Fatal("found the kernel without debuginfod")
	}
	srv := debuginfodtest.Start(t, served, kid, mid)
	opts.Debuginfod = &debuginfod.Client{URLs: []string{srv.URL}, CachePath: filepath.Join(t.TempDir(), "cache"), Transfer: debuginfodtest.InProcess}
	s, err := kernelAt(sysroot, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []string
	for _, img := range s.Images() {
		got = append(got, fmt.Sprintf("%s %s %s", img.Module, img.BuildID, img.Source))
	}
	want := []string{"kernel " + kid + " debuginfod", "fakemod " + mid + " debuginfod"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
}

// buildIDNote is the ELF note of a GNU build-id, as /sys/kernel/notes
// holds it.
func buildIDNote(t *testing.T, id string) []byte {
	desc, err := hex.DecodeString(id)
	if err != nil {
		t.Fatal(err)
	}
	b := binary.LittleEndian.AppendUint32(nil, 4)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(desc)))
	b = binary.LittleEndian.AppendUint32(b, 3)
	b = append(b, "GNU\x00"...)
	return append(b, desc...)
}
