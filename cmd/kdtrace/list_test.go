package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestList checks -l and -lv: dtrace's columns, IDs in the order of the
// whole catalog, -P/-m/-f/-n/-s descriptions, the report of a
// description that matches nothing, and the attributes and argument
// types of -v.
func TestList(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the probe catalog is the running Linux system's")
	}
	script := filepath.Join(t.TempDir(), "two.d")
	os.WriteFile(script, []byte("BEGIN { x = 1; }\nnosuch:::, dtrace:::END { trace(x); }\n"), 0o644)
	const header = "   ID   PROVIDER            MODULE                          FUNCTION NAME\n"
	tests := []struct {
		args         []string
		stdout       string
		stderr       string
		status       int
		stdoutPrefix bool
	}{
		{args: []string{"-l", "-P", "dtrace"}, stdout: header +
			"    1     dtrace                                                     BEGIN\n" +
			"    2     dtrace                                                     END\n" +
			"    3     dtrace                                                     ERROR\n"},
		{args: []string{"-l", "-n", "dtrace:::E*", "-n", "BEGIN"}, stdout: header +
			"    2     dtrace                                                     END\n" +
			"    3     dtrace                                                     ERROR\n" +
			"    1     dtrace                                                     BEGIN\n"},
		{args: []string{"-l", "-s", script}, stdout: header +
			"    1     dtrace                                                     BEGIN\n" +
			"    2     dtrace                                                     END\n",
			stderr: "kdtrace: failed to match nosuch:::: No probe matches description\n"},
		// IDs name the probes -l numbers.
		{args: []string{"-l", "-i", "2", "-n", "3"}, stdout: header +
			"    2     dtrace                                                     END\n" +
			"    3     dtrace                                                     ERROR\n"},
		{args: []string{"-l", "-i", "4000000000"}, stdout: header,
			stderr: "kdtrace: failed to match 4000000000: No probe matches description\n"},
		{args: []string{"-e", "-i", "4000000000"}, stderr: "kdtrace: invalid probe specifier 4000000000: probe description ::: does not match any probes\n", status: 1},
		{args: []string{"-l", "-m", "nosuch"}, stdout: header,
			stderr: "kdtrace: failed to match :nosuch::: No probe matches description\n"},
		{args: []string{"-l", "-f", "a:b:c:d"}, stderr: "kdtrace: invalid probe specifier a:b:c:d: invalid probe description \"a:b:c:d\": Overspecified probe description\n", status: 1},
		{args: []string{"-lv", "-n", "BEGIN"}, stdout: header +
			"    1     dtrace                                                     BEGIN\n" +
			"\n\tProbe Description Attributes\n\t\tIdentifier Names: Stable\n\t\tData Semantics:   Stable\n\t\tDependency Class: Common\n" +
			"\n\tArgument Attributes\n\t\tIdentifier Names: Stable\n\t\tData Semantics:   Stable\n\t\tDependency Class: Common\n" +
			"\n\tArgument Types\n\t\tNone\n\n"},
		{args: []string{"-l"}, stdout: header + "    1     dtrace                                                     BEGIN\n", stdoutPrefix: true},
		// -P, -m and -f take a predicate and actions too.
		{args: []string{"-e", "-d", "-m", "dtrace: /1/ { trace(1); }"}, stdout: "dtrace:::\n/0x1/\n{\n        trace(0x1);\n}\n\n"},
		{args: []string{"-v", "-e", "-n", "BEGIN"}, stderr: "kdtrace: option -v is not supported yet without -l\n", status: 2},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		st := run(append([]string{"kdtrace", "--btf", "none"}, tt.args...), &stdout, &stderr)
		if st != tt.status {
			t.Errorf("%v: exit %d, want %d (%s)", tt.args, st, tt.status, stderr.String())
		}
		got := stdout.String()
		if tt.stdoutPrefix && strings.HasPrefix(got, tt.stdout) {
			got = tt.stdout
		}
		if diff := cmp.Diff(tt.stdout, got); diff != "" {
			t.Errorf("%v: stdout (-want +got):\n%s", tt.args, diff)
		}
		if diff := cmp.Diff(tt.stderr, stderr.String()); diff != "" {
			t.Errorf("%v: stderr (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestListArgs checks that -lv gives a probe's argument types as D
// sees them, translated ones by their translated type.
func TestListArgs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the probe catalog is the running Linux system's")
	}
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		t.Skip("no kernel BTF")
	}
	var stdout, stderr bytes.Buffer
	if st := run([]string{"kdtrace", "-lv", "-n", "proc:::exec-success"}, &stdout, &stderr); st != 0 {
		t.Fatalf("exit %d: %s", st, stderr.String())
	}
	for _, want := range []string{"proc           vmlinux                                   exec-success\n", "\t\tNone\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("-lv proc:::exec-success lacks %q:\n%s", want, stdout.String())
		}
	}
	for desc, want := range map[string]string{
		"proc:::exec":   "\t\targs[0]: string\n",
		"proc:::create": "\t\targs[0]: psinfo_t *\n\t\targs[1]: psinfo_t *\n\t\targs[2]: int\n",
	} {
		stdout.Reset()
		if st := run([]string{"kdtrace", "-lv", "-n", desc}, &stdout, &stderr); st != 0 {
			t.Fatalf("exit %d: %s", st, stderr.String())
		}
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("-lv %s lacks %q:\n%s", desc, want, stdout.String())
		}
	}
}

// TestTarget checks -p: the process is looked up before anything is
// compiled, and is $target.
func TestTarget(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pid probes are listed from Linux's /proc")
	}
	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Skip(err)
	}
	pid := mappedPID(t, sleep)
	var stdout, stderr bytes.Buffer
	// As dtrace's strtol, -p takes leading white space and a sign.
	for _, arg := range []string{pid, " " + pid, "\t+" + pid} {
		stdout.Reset()
		if st := run([]string{"kdtrace", "--btf", "none", "-e", "-d", "-p", arg, "-n", "BEGIN { trace($target); }"}, &stdout, &stderr); st != 0 {
			t.Fatalf("-p %q: exit %d: %s", arg, st, stderr.String())
		}
		if want := fmt.Sprintf("trace(0x%x)", sleep.Process.Pid); !strings.Contains(stdout.String(), want) {
			t.Errorf("-p %q: $target is not the process: want %s in\n%s", arg, want, stdout.String())
		}
	}
	stdout.Reset()
	if st := run([]string{"kdtrace", "--btf", "none", "-l", "-p", pid, "-n", "pid$target:libc:malloc:entry"}, &stdout, &stderr); st != 0 {
		t.Fatalf("exit %d: %s", st, stderr.String())
	}
	if want := fmt.Sprintf("%10s %17s %33s %s\n", "pid"+pid, "libc.so.6", "malloc", "entry"); !strings.Contains(stdout.String(), want) {
		t.Errorf("-l pid$target:libc:malloc:entry lacks %q:\n%s", want, stdout.String())
	}
	for arg, want := range map[string]string{
		"2147483647": "kdtrace: failed to grab pid 2147483647: No such process\n",
		"12x":        "kdtrace: invalid pid: 12x\n",
		"12 ":        "kdtrace: invalid pid: 12 \n",
	} {
		stderr.Reset()
		if st := run([]string{"kdtrace", "-e", "-p", arg, "-n", "BEGIN"}, &stdout, &stderr); st != 1 || stderr.String() != want {
			t.Errorf("-p %s: exit %d, %q; want 1, %q", arg, st, stderr.String(), want)
		}
	}
}

// TestListArgsAgree checks that -lv lists, for a probe of each
// provider that types its arguments, exactly the args[] the compiler
// types: each listed args[N] compiles with its type (translated ones
// included), one past the last
// is out of range, and an (unknown) type is one the compiler cannot
// resolve either. Which types a probe has depends on the machine
// (syscall's come from tracefs, or BTF where tracefs cannot be read).
func TestListArgsAgree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the probe catalog is the running Linux system's")
	}
	argLine := regexp.MustCompile(`(?m)^\t\targs\[(\d+)\]: (.*)$`)
	for _, desc := range []string{"syscall::read:entry", "syscall::openat:entry", "syscall::read:return", "fbt::vfs_read:entry", "proc:::exec", "dtrace:::BEGIN",
		"ip:::send", "tcp:::send", "tcp:::accept-established", "udp:::receive",
		"lockstat:::adaptive-block", "lockstat:::rw-spin", "lockstat:::spin-acquire", "cpc:::cpu_clock-all-10000",
		"sdt:task::task_rename", "sdt:sched::sched_process_exec", "rawtp:sched::sched_process_fork"} {
		var stdout, stderr bytes.Buffer
		if st := run([]string{"kdtrace", "-lv", "-n", desc}, &stdout, &stderr); st != 0 {
			t.Fatalf("-lv %s: exit %d: %s", desc, st, stderr.String())
		}
		if !strings.Contains(stdout.String(), "Argument Types") {
			t.Logf("%s: not on this system", desc)
			continue
		}
		listed := argLine.FindAllStringSubmatch(stdout.String(), -1)
		if len(listed) == 0 && !strings.Contains(stdout.String(), "\t\tNone\n") {
			t.Errorf("-lv %s lists neither types nor None:\n%s", desc, stdout.String())
		}
		for i, m := range listed {
			prog := fmt.Sprintf("%s { this->n = sizeof(args[%d]); }", desc, i)
			stderr.Reset()
			st := run([]string{"kdtrace", "-x", "errtags", "-e", "-n", prog}, &stdout, &stderr)
			if m[2] == "(unknown)" {
				if st == 0 || !strings.Contains(stderr.String(), "[D_ARGS_TYPE]") {
					t.Errorf("%s: -lv lists args[%d] as (unknown), the compiler says: exit %d %s", desc, i, st, stderr.String())
				}
				continue
			}
			if st != 0 {
				// A pointer to translated data has no size;
				// what it points to can be traced.
				stderr.Reset()
				prog := fmt.Sprintf("%s { trace(*args[%d]); }", desc, i)
				st = run([]string{"kdtrace", "-x", "errtags", "-e", "-n", prog}, &stdout, &stderr)
			}
			if st != 0 {
				t.Errorf("%s: -lv lists args[%d]: %s, the compiler says: %s", desc, i, m[2], stderr.String())
			}
		}
		prog := fmt.Sprintf("%s { this->n = sizeof(args[%d]); }", desc, len(listed))
		stderr.Reset()
		if st := run([]string{"kdtrace", "-x", "errtags", "-e", "-n", prog}, &stdout, &stderr); st == 0 {
			t.Errorf("%s: -lv lists %d arguments, but args[%d] compiles", desc, len(listed), len(listed))
		}
	}
}
