package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestPsargs checks curpsinfo->pr_psargs and execargs: the arguments
// of the process a probe fires in, separated by spaces and cut to
// PRARGSZ-1 bytes as dtrace gives them; a kernel thread's command name;
// and that translated char arrays hold only their values' bytes (before,
// pr_psargs copied 80 bytes from the 16 of comm, and pr_clname 8 from a
// 3-byte string).
func TestPsargs(t *testing.T) {
	needTracing(t)
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to run")
	}
	short := truePath + " alpha beta gamma"
	long := truePath
	for _, w := range []string{"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen"} {
		long += " " + w
	}
	if len(long) <= 80 {
		t.Fatalf("the long command is %d bytes, not over PRARGSZ", len(long))
	}
	const exitProbe = "syscall::exit_group:entry /pid == $target/ "
	tests := []struct {
		args   []string
		stdout string
	}{
		{[]string{"-q", "-c", short, "-n", exitProbe + `{ printf("[%s]\n", curpsinfo->pr_psargs); exit(0); }`},
			"[" + short + "]\n"},
		{[]string{"-q", "-c", short, "-n", exitProbe + `{ printf("[%s]\n", execargs); exit(0); }`},
			"[" + short + "]\n"},
		// trace() records the member's 80 bytes: a string, not a hex
		// dump of what follows it.
		{[]string{"-q", "-c", short, "-n", exitProbe + `{ trace(curpsinfo->pr_psargs); exit(0); }`},
			short},
		{[]string{"-q", "-c", short, "-n", exitProbe + `{ p = *curpsinfo; trace(p.pr_psargs); printf("|%s", p.pr_fname); exit(0); }`},
			short + "|true"},
		{[]string{"-q", "-c", long, "-n", exitProbe + `{ printf("[%s] %d\n", curpsinfo->pr_psargs, strlen(curpsinfo->pr_psargs)); exit(0); }`},
			"[" + long[:79] + "] 79\n"},
		{[]string{"-q", "-c", long, "-n", exitProbe + `{ p = *curpsinfo; printf("[%s]\n", p.pr_psargs); exit(0); }`},
			"[" + long[:79] + "]\n"},
		// execargs is cut to strsize-1 bytes.
		{[]string{"-q", "-x", "strsize=16", "-c", long, "-n", exitProbe + `{ printf("[%s]\n", execargs); exit(0); }`},
			"[" + long[:15] + "]\n"},
		// A kernel thread has no arguments: its command name.
		{[]string{"-q", "-n", `sched:::on-cpu /curthread->mm == NULL && pid != 0/ { printf("%d\n", curpsinfo->pr_psargs == execname && execname != ""); exit(0); }`},
			"1\n"},
		// The 8 bytes of pr_clname hold "TS" and zeroes, not what
		// follows the string "TS".
		{[]string{"-q", "-n", `sched:::on-cpu /curthread->mm == NULL && pid != 0 && curthread->policy == SCHED_NORMAL/ { l = *curlwpsinfo; printf("%s %d %d %d %d %d %d\n", l.pr_clname, l.pr_clname[2], l.pr_clname[3], l.pr_clname[4], l.pr_clname[5], l.pr_clname[6], l.pr_clname[7]); exit(0); }`},
			"TS 0 0 0 0 0 0\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		st := run(append([]string{"kdtrace"}, tt.args...), &stdout, &stderr)
		// dtrace ends its output with a newline at exit.
		if st != 0 || stdout.String() != tt.stdout+"\n" {
			t.Errorf("kdtrace %q: status %d, stdout %q, stderr %q; want 0 and %q", tt.args, st, stdout.String(), stderr.String(), tt.stdout)
		}
	}
}

// TestTranslatorBounds translates a struct whose 16-byte member a
// translator fills from a 4-byte array followed by other bytes: the
// member holds the array's bytes and zeroes, read member by member or
// translated whole (before, its bytes 4 to 7 were the 'A's after it).
func TestTranslatorBounds(t *testing.T) {
	needTracing(t)
	script := filepath.Join(t.TempDir(), "xlate.d")
	src := `struct src { char a[4]; uint32_t tail; };
typedef struct dst { char m[16]; int after; } dst_t;
translator dst_t < struct src *S > { m = S->a; after = 7; };
BEGIN
{
	this->p = (struct src *)alloca(sizeof (struct src));
	this->p->a[0] = 'h';
	this->p->a[1] = 'i';
	this->p->tail = 0x41414141;
	printf("%d %d %d %s|", xlate<dst_t *>(this->p)->m[4], xlate<dst_t *>(this->p)->m[7],
	    xlate<dst_t *>(this->p)->after, xlate<dst_t *>(this->p)->m);
	d = *xlate<dst_t *>(this->p);
	printf("%d %d %d %s\n", d.m[4], d.m[7], d.after, d.m);
	exit(0);
}
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	st := run([]string{"kdtrace", "-q", "-s", script}, &stdout, &stderr)
	if want := "0 0 7 hi|0 0 7 hi\n\n"; st != 0 || stdout.String() != want {
		t.Errorf("kdtrace -s xlate.d: status %d, stdout %q, stderr %q; want 0 and %q", st, stdout.String(), stderr.String(), want)
	}
}
