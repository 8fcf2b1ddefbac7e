package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// savedReads is how many one-byte reads the saved programs' target
// makes.
const savedReads = 37

// TestSavedRoundTrip saves programs with -A and runs them with -s: the
// output is byte for byte that of running the script itself, with the
// options its pragmas and the command line set, and $target is the
// process of -c of the run, not of the save.
func TestSavedRoundTrip(t *testing.T) {
	needTracing(t)
	needSyscalls(t)
	dd := "dd if=/dev/zero of=/dev/null bs=1 status=none count=" + strconv.Itoa(savedReads)
	for _, c := range []struct {
		name   string
		script string
		save   []string // options given to -A
		run    []string // options given to both runs
		want   string   // a line the output must have
	}{
		{
			name: "pragmas aggregations printf",
			script: `#pragma D option quiet
#pragma D option bufsize=1m
syscall::read:entry /pid == $target && arg2 == 1/ { @n["reads"] = count(); @s = sum(arg2); self->t = 1; }
syscall::read:return /self->t/ { @r[probefunc] = count(); self->t = 0; }
END { printa("%s %@d\n", @n); printa("sum %@d\n", @s); printa(@r); }`,
			want: "reads " + strconv.Itoa(savedReads) + "\n",
		},
		{
			name:   "options saved from the command line",
			script: `syscall::read:entry /pid == $target/ { @ = quantize(arg2); } syscall::read:return /pid == $target && arg0 == 1/ { @ok = count(); } END { printa("ok %@d\n", @ok); }`,
			save:   []string{"-q", "-x", "aggsortkey", "-b", "2m"},
			want:   "ok " + strconv.Itoa(savedReads) + "\n",
		},
		{
			// The aggregations keep their names in JSON.
			name:   "json",
			script: `syscall::read:entry /pid == $target && arg2 == 1/ { @reads = count(); @bytes[execname] = sum(arg2); }`,
			save:   []string{"-O", "json"},
			want:   `{"version":1,"type":"aggregation","id":1,"name":"@reads"`,
		},
		{
			// encoding is the compiler's option, which the consumer
			// reads too: the bars of a quantization in UTF-8.
			name: "encoding",
			script: `#pragma D option quiet
#pragma D option encoding=utf8
syscall::read:entry /pid == $target && arg2 == 1/ { @n = lquantize(1, 0, 4, 1); @r = count(); }
END { printa(@n); printa("reads %@d\n", @r); }`,
			want: "reads " + strconv.Itoa(savedReads) + "\n",
		},
		{
			name:   "tracepoint and trace",
			script: `sdt:::sched_process_exit /pid == $target/ { trace("exit"); @n[pid == $target, pid != $target + 0] = count(); } END { printa("exits %d %d %@d\n", @n); }`,
			run:    []string{"-q"},
			want:   "exits 1 0 1\n",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			script := filepath.Join(dir, "prog.d")
			if err := os.WriteFile(script, []byte(c.script), 0o644); err != nil {
				t.Fatal(err)
			}
			saved := filepath.Join(dir, "prog.dof")
			args := append(append([]string{"kdtrace", "-A", "-o", saved}, c.save...), c.run...)
			var stdout, stderr bytes.Buffer
			if st := run(append(args, "-s", script), &stdout, &stderr); st != 0 || stdout.Len() != 0 || stderr.String() != "kdtrace: saved anonymous enabling in "+saved+"\n" {
				t.Fatalf("kdtrace %q: status %d, stdout %q, stderr %q", args, st, stdout.String(), stderr.String())
			}
			direct := append(append(append([]string{"kdtrace"}, c.save...), c.run...), "-c", dd, "-s", script)
			want, wantErr := runOut(t, direct)
			fromSaved := append(append([]string{"kdtrace"}, c.run...), "-c", dd, "-s", saved)
			got, gotErr := runOut(t, fromSaved)
			if !strings.Contains(want, c.want) {
				t.Errorf("kdtrace %q printed no %q:\n%s", direct, c.want, want)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("output (-script +saved):\n%s", d)
			}
			// What differs in the messages is the file's name, and
			// the process's.
			gotErr = strings.ReplaceAll(gotErr, saved, script)
			exited := regexp.MustCompile(`pid \d+ has exited`)
			wantErr = exited.ReplaceAllString(wantErr, "pid N has exited")
			gotErr = exited.ReplaceAllString(gotErr, "pid N has exited")
			if d := cmp.Diff(wantErr, gotErr); d != "" {
				t.Errorf("stderr (-script +saved):\n%s", d)
			}
		})
	}
}

// runOut runs kdtrace in-process and returns its output and messages,
// failing the test on a status other than 0.
func runOut(t *testing.T, args []string) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if st := run(args, &stdout, &stderr); st != 0 {
		t.Fatalf("kdtrace %q: status %d: %s", args, st, stderr.String())
	}
	return stdout.String(), stderr.String()
}

// needSyscalls skips a test where the syscall provider cannot attach.
func needSyscalls(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/tracing/events/syscalls"); err != nil {
		t.Skipf("syscall trace events are not there (mount -t tracefs nodev /sys/kernel/tracing): %v", err)
	}
}

// TestSavedRefused: what a saved program cannot hold, or a run cannot
// take, is refused in one message, and nothing is written or run.
func TestSavedRefused(t *testing.T) {
	dir := t.TempDir()
	demo := filepath.Join("..", "..", "examples", "kinst", "demo")
	const demoID = "69d9a71761894b585adbf7ba2654e65b2dd766f3"
	foreign := filepath.Join(dir, "foreign.dof")
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "--kernel", demo, "-A", "-o", foreign, "-n", "BEGIN { exit(0); }"}, &stdout, &stderr); st != 0 {
		t.Fatalf("saving against %s: status %d: %s", demo, st, stderr.String())
	}
	notes, err := os.ReadFile("/sys/kernel/notes")
	if err != nil {
		t.Skipf("the running kernel's build-id cannot be read: %v", err)
	}
	running := noteID(t, notes)
	for _, c := range []struct {
		args   []string
		status int
		stderr string // a regular expression
	}{
		{[]string{"-e", "-s", foreign}, 1,
			`^kdtrace: failed to load saved program: ` + regexp.QuoteMeta(foreign) + ` was compiled for vmlinux build-id ` + demoID + `, but the running kernel has build-id ` + running + "\n$"},
		{[]string{"-A", "-n", "BEGIN"}, 2, "^kdtrace: -A requires -o, the file to save the program in\n$"},
		{[]string{"-A", "-o", filepath.Join(dir, "x.dof"), "-p", strconv.Itoa(os.Getpid()), "-n", "BEGIN"}, 2, `^kdtrace: -A cannot be used with -p: a saved program is compiled against processes of -c's command\n$`},
		{[]string{"-A", "-o", filepath.Join(dir, "x.dof"), "-n", "BEGIN { trace($target + 1); }"}, 1, `^kdtrace: failed to save program: \$target cannot be saved where it is compiled into a constant`},
		{[]string{"-A", "-o", filepath.Join(dir, "x.dof"), "-n", "BEGIN /$target < 100000/ { exit(0); }"}, 1, `^kdtrace: failed to save program: \$target cannot be saved where`},
		{[]string{"--kernel", demo, "-A", "-o", filepath.Join(dir, "x.dof"), "-n", "BEGIN { trace((long)&`main); }"}, 1,
			"address of vmlinux`main is not known: a saved program cannot hold a kernel address"},
		{[]string{"-A", "-o", filepath.Join(dir, "x.dof"), "-n", "pid$target::malloc:entry"}, 1, `^kdtrace: invalid probe specifier pid\$target::malloc:entry: .*\$target.* \(a saved program takes \$target in probe descriptions only with -c, the command it is compiled against\)\n$`},
		{[]string{"-A", "-o", filepath.Join(dir, "x.dof"), "-s", foreign}, 2, "^kdtrace: -A: " + regexp.QuoteMeta(foreign) + " is a saved program already\n$"},
		{[]string{"-C", "-e", "-s", foreign}, 2, "^kdtrace: -C cannot be used with saved program " + regexp.QuoteMeta(foreign) + ", which is compiled already\n$"},
		{[]string{"-l", "-s", foreign}, 2, "is a saved program: it can only be run"},
		{[]string{"-e", "-s", foreign, "-n", "BEGIN"}, 2, "^kdtrace: saved program " + regexp.QuoteMeta(foreign) + " runs alone: it cannot be given with other programs\n$"},
	} {
		stdout.Reset()
		stderr.Reset()
		st := run(append([]string{"kdtrace"}, c.args...), &stdout, &stderr)
		if st != c.status || !regexp.MustCompile(c.stderr).MatchString(stderr.String()) {
			t.Errorf("kdtrace %q: status %d, stderr %q; want %d and %q", c.args, st, stderr.String(), c.status, c.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.dof")); err == nil {
		t.Errorf("a refused -A wrote its file")
	}
}

// noteID returns the GNU build-id in ELF notes, hex.
func noteID(t *testing.T, notes []byte) string {
	t.Helper()
	for len(notes) >= 12 {
		le := func(b []byte) int { return int(b[0]) | int(b[1])<<8 | int(b[2])<<16 | int(b[3])<<24 }
		nsz, dsz, typ := le(notes), le(notes[4:]), le(notes[8:])
		nal, dal := (nsz+3)&^3, (dsz+3)&^3
		if 12+nal+dal > len(notes) {
			break
		}
		if typ == 3 && string(notes[12:12+nsz]) == "GNU\x00" {
			const hexdigits = "0123456789abcdef"
			var s []byte
			for _, b := range notes[12+nal : 12+nal+dsz] {
				s = append(s, hexdigits[b>>4], hexdigits[b&15])
			}
			return string(s)
		}
		notes = notes[12+nal+dal:]
	}
	t.Skip("the running kernel's notes hold no build-id")
	return ""
}

// TestSavedCompilesPrintOnce: -A compiles the programs again to find
// $target's slots, and what -d prints is printed once, as without -A.
func TestSavedCompilesPrintOnce(t *testing.T) {
	prog := "BEGIN { x = 1; }"
	var want, wantErr bytes.Buffer
	if st := run([]string{"kdtrace", "-e", "-d", "-n", prog}, &want, &wantErr); st != 0 {
		t.Fatalf("kdtrace -e -d: status %d: %s", st, wantErr.String())
	}
	var got, gotErr bytes.Buffer
	args := []string{"kdtrace", "-A", "-o", filepath.Join(t.TempDir(), "p.dof"), "-d", "-n", prog}
	if st := run(args, &got, &gotErr); st != 0 {
		t.Fatalf("kdtrace %q: status %d: %s", args, st, gotErr.String())
	}
	if d := cmp.Diff(want.String(), got.String()); d != "" {
		t.Errorf("-d's output (-e +A):\n%s", d)
	}
	if d := cmp.Diff(wantErr.String()+"kdtrace: saved anonymous enabling in "+args[3]+"\n", gotErr.String()); d != "" {
		t.Errorf("stderr (-e +A):\n%s", d)
	}
}

// TestScriptFIFO: a script given as a FIFO, as bash's <(…) gives one,
// is read once: checking whether it is a saved program takes none of
// its bytes from the compile, which a second open would wait for in
// vain.
func TestScriptFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "script.d")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.WriteString("BEGIN { exit(0); }\n")
		f.Close()
	}()
	status := make(chan int, 1)
	var stderr bytes.Buffer
	go func() { status <- run([]string{"kdtrace", "-e", "-s", fifo}, io.Discard, &stderr) }()
	select {
	case st := <-status:
		if st != 0 {
			t.Errorf("status %d: %s", st, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("kdtrace still waits for the script")
	}
}
