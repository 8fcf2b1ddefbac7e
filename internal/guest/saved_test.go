package guest

import (
	"context"
	"fmt"

	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/buildid"
)

// A savedProgram is a program kdtrace -A compiles on the host, against
// the -dbg vmlinux, for the guest to run.
type savedProgram struct {
	file string   // its name in the guest's /saved
	args []string // kdtrace's arguments after -A -o
}

var savedPrograms = []savedProgram{
	{"inline.dof", []string{"-q", "-n", `kinst::add_rchar:entry /pid == $target/ { @e[probefunc] = count(); }
		kinst::add_rchar:return /pid == $target/ { @r[probefunc] = count(); }
		END { printa("entry %s %@d\n", @e); printa("return %s %@d\n", @r); }`}},
	{"offset.dof", []string{"-n", `kinst::vfs_read:5 /pid == $target/ { @n = count(); }
		END { printa("hits %@d\n", @n); }`}},
	{"fbt.dof", []string{"-q", "-n", `fbt::vfs_read:entry /pid == $target/ { @n[args[2]] = count(); }
		END { printa("count %d hits %@d\n", @n); }`}},
	{"first.dof", []string{"-q", "-n", `kinst::add_rchar:entry /pid == $target/ { n = 1; exit(0); } END { printf("fired %d\n", n); }`}},
}

// savedCases run the saved programs in a guest that has no debug image
// at all: the counts are TestGuest's, exact.
var savedCases = []guestCase{
	{
		name: "no debug image",
		cmd:  `ls /usr/lib/debug 2>/dev/null; kdtrace -e -n 'kinst::add_rchar:entry' >/dev/null 2>&1 || echo "cannot compile"`,
		want: `^cannot compile\n$`,
	},
	{
		name: "saved kinst inline entry and return",
		cmd:  `kdtrace -s /saved/inline.dof -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\nentry vfs_read %[1]d\nreturn vfs_read %[1]d\n\n*$`, reads),
	},
	{
		// -q given at the run, not saved.
		name: "saved kinst offset",
		cmd:  `kdtrace -q -s /saved/offset.dof -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\nhits %[1]d\n\n*$`, reads),
	},
	{
		name: "saved fbt args",
		cmd:  `kdtrace -s /saved/fbt.dof -c '/bin/readzero ` + strconv.Itoa(reads) + `'`,
		want: fmt.Sprintf(`^readzero: %[1]d reads\ncount 1 hits %[1]d\n\n*$`, reads),
	},
	{
		// The time from start to the first firing, against TestGuest's
		// "kinst inline first firing", which compiles in the guest.
		name: "saved kinst inline first firing",
		cmd:  `kdtrace -s /saved/first.dof -c '/bin/readzero 1'`,
		want: `^(readzero: 1 reads\n)?fired 1\n(readzero: 1 reads\n)?\n*$`,
	},
}

// TestGuestSaved compiles programs on the host against the guest
// kernel's -dbg vmlinux (kdtrace --kernel … -A), boots that kernel with
// no debug image, and runs them there with kdtrace -s; a program saved
// for another kernel is refused, naming both build-ids.
func TestGuestSaved(t *testing.T) {
	busybox, cache := guestSetup(t, "gcc")
	g := fetchGuestKernel(t, cache, Needs{Debug: true}, Debian12)
	dir := t.TempDir()
	kdtrace := buildKdtrace(t, dir)
	readzero := filepath.Join(dir, "readzero")
	if out, err := exec.Command("gcc", "-static", "-O2", "-o", readzero, "testdata/readzero.c").CombinedOutput(); err != nil {
		t.Fatalf("building readzero: %v\n%s", err, out)
	}
	data := map[string]string{}
	for _, p := range savedPrograms {
		out := filepath.Join(dir, p.file)
		args := append([]string{"--kernel", g.vmlinux, "-A", "-o", out}, p.args...)
		start := time.Now()
		if b, err := exec.Command(kdtrace, args...).CombinedOutput(); err != nil {
			t.Fatalf("kdtrace %q on the host: %v\n%s", args, err, b)
		}
		t.Logf("%s compiled on the host in %v", p.file, time.Since(start).Round(time.Millisecond))
		data["saved/"+p.file] = out
	}
	// A program compiled for another image: the demo, whose build-id
	// is not the guest kernel's.
	demo := filepath.Join("..", "..", "examples", "kinst", "demo")
	other := filepath.Join(dir, "other.dof")
	if b, err := exec.Command(kdtrace, "--kernel", demo, "-A", "-o", other, "-n", "BEGIN { exit(0); }").CombinedOutput(); err != nil {
		t.Fatalf("saving against %s: %v\n%s", demo, err, b)
	}
	data["saved/other.dof"] = other
	guestID, err := buildid.Path(g.vmlinux)
	if err != nil {
		t.Fatal(err)
	}
	cases := append(savedCases[:len(savedCases):len(savedCases)], guestCase{
		name:   "saved for another kernel",
		cmd:    `kdtrace -s /saved/other.dof`,
		status: 1,
		want: `^kdtrace: failed to load saved program: /saved/other.dof was compiled for vmlinux build-id 69d9a71761894b585adbf7ba2654e65b2dd766f3, but the running kernel has build-id ` +
			guestID + "\n$",
	})

	res, err := Run(context.Background(), Config{
		Image:   g.Image,
		Busybox: busybox,
		Files:   map[string]string{"bin/kdtrace": kdtrace, "bin/readzero": readzero},
		Data:    data,
		Script:  guestScript(cases),
		Timeout: 4 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	judge(t, res, cases)
}
