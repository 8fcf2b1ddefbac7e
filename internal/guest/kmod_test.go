package guest

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// FreeBSD proves kinst's inline tracing with a test module driven
// through a sysctl (kinst-inline-tst in the corpus); these are its four
// tests, on testdata/kmod/kinst_test.c loaded into the guest and driven
// through /proc/kinst_test. Each write of N calls each of the module's
// three callers N times with arguments seed..seed+N-1, half of them odd,
// so every count below is known before the run.
const (
	triggers = 200
	seed     = 0x1234 // kinst_test.c's kinst_test_seed
)

// A kmodCase is one kdtrace run in the guest: its output lines must be
// want in any order (printa orders equal counts as it likes), or when
// match is set, sorted and joined, match each of its regular
// expressions; its stderr, warnings and errors, must match stderr.
type kmodCase struct {
	name   string
	cmd    string
	status int
	want   []string
	match  []string
	stderr string // a regular expression; "" for nothing on stderr
}

// moduleWarning is what kdtrace says when the guest's kernel has no
// debug image, as here: the module's .ko answers alone.
func moduleWarning(release, fn string) string {
	return `^kdtrace: warning: kinst::` + fn + `: only the copies in modules are listed, the kernel's debug info is missing: running kernel ` +
		regexp.QuoteMeta(release) + ` \(build-id [0-9a-f]{40}\): no debug info for kernel: looked in .*\n$`
}

// trigger is the command kdtrace -c runs: a shell writing N to the
// module's file, so that the calls happen in the traced process.
func trigger(n int) string { return fmt.Sprintf("/tmp/trigger %d", n) }

func kmodCases(release string) []kmodCase {
	callers := []string{"kinst_test_caller1", "kinst_test_caller2", "kinst_test_caller3"}
	perCaller := func(format string) []string {
		var out []string
		for _, c := range callers {
			out = append(out, fmt.Sprintf(format, c, triggers))
		}
		return out
	}
	return []kmodCase{
		{
			// tst.dtracetest_inline: the entry and return of a function
			// inlined into three callers, each firing once a call, on
			// both of its paths out.
			name: "inline",
			cmd: `kdtrace -q -n 'kinst::kinst_test_inline:entry { @e[probefunc] = count(); }
				kinst::kinst_test_inline:return { @r[probefunc] = count(); }
				END { printa("entry %s %@d\n", @e); printa("return %s %@d\n", @r); }' -c '` + trigger(triggers) + `'`,
			want:   append(perCaller("entry %s %d"), perCaller("return %s %d")...),
			stderr: moduleWarning(release, "kinst_test_inline"),
		},
		{
			// tst.dtracetest_fbtconvert: a function never inlined is
			// traced by fbt, arguments and all.
			name: "fbtconvert",
			cmd: `kdtrace -q -n 'kinst::kinst_test_fbtconvert:entry,kinst::kinst_test_fbtconvert:return {
					@[probeprov, probemod, probefunc, probename] = count(); }
				kinst::kinst_test_fbtconvert:entry { @lo = min(regs[R_RDI]); @hi = max(regs[R_RDI]); }
				END { printa("%s %s %s %s %@d\n", @); printa("rdi %@d", @lo); printa(" %@d\n", @hi); }' -c '` + trigger(triggers) + `'`,
			want: []string{
				fmt.Sprintf("fbt kinst_test kinst_test_fbtconvert entry %d", triggers),
				fmt.Sprintf("fbt kinst_test kinst_test_fbtconvert return %d", triggers),
				fmt.Sprintf("rdi %d %d", seed, seed+triggers-1),
			},
			stderr: moduleWarning(release, "kinst_test_fbtconvert"),
		},
		{
			// tst.inline_agg: entry and return paired on the thread,
			// aggregated by the caller the copy is in.
			name: "inline agg",
			cmd: `kdtrace -q -n 'kinst::kinst_test_inline:entry { self->ts = timestamp; }
				kinst::kinst_test_inline:return /self->ts/ {
					@n[probefunc] = count(); @later[probefunc] = sum(timestamp >= self->ts); self->ts = 0; }
				END { printa("%s %@d %@d\n", @n, @later); }' -c '` + trigger(triggers) + `'`,
			want:   perCaller("%s %[2]d %[2]d"),
			stderr: moduleWarning(release, "kinst_test_inline"),
		},
		{
			// tst.inline_multiple: one clause over the return of an
			// inline function, the entry of one both inlined and out of
			// line, and the entry of one never inlined. In caller3 the
			// first's return site is the second's entry site: the clause
			// fires there once for each.
			name: "inline multiple",
			cmd: `kdtrace -q -n 'kinst::kinst_test_inline:return, kinst::kinst_test_both:entry, kinst::kinst_test_fbtconvert:entry {
					@[probefunc] = count(); }
				END { printa("%s %@d\n", @); }' -c '` + trigger(triggers) + `'`,
			want: []string{
				fmt.Sprintf("kinst_test_caller1 %d", triggers),
				fmt.Sprintf("kinst_test_caller2 %d", triggers),
				fmt.Sprintf("kinst_test_caller3 %d", 2*triggers),
				fmt.Sprintf("kinst_test_both %d", triggers),
				fmt.Sprintf("kinst_test_fbtconvert %d", triggers),
			},
			// One warning a run.
			stderr: moduleWarning(release, "kinst_test_inline"),
		},
		{
			// kinst::f: on a module's function, its instructions read
			// from the live text (kallsyms and /proc/kcore): each that
			// runs fires once a call, those inside the inline copy's
			// branch (taken by half the arguments) half as often, and
			// +0, the ftrace NOP, and +5 are among them.
			name: "every instruction",
			cmd: `kdtrace -q -n 'kinst::kinst_test_caller2: { @[probename] = count(); }
				END { printa("%s %@d\n", @); }' -c '` + trigger(triggers) + `'`,
			match: []string{
				fmt.Sprintf(`^0 %[1]d\n(?:\d+ (?:%[1]d|%[2]d)\n)+$`, triggers, triggers/2),
				fmt.Sprintf(`(?m)^5 %d$`, triggers),
				fmt.Sprintf(`(?m)^\d+ %d$`, triggers/2),
			},
		},
		{
			// The kernel refuses kprobes in a notrace function; kdtrace
			// says why rather than pass on a missing symbol.
			name:   "notrace",
			cmd:    `kdtrace -q -n 'fbt::kinst_test_notrace:entry { exit(0); }'`,
			status: 1,
			stderr: `^kdtrace: could not enable tracing: kinst_test_notrace: the kernel refuses kprobes in kinst_test_notrace \[kinst_test\]: ` +
				`it is notrace \(not in /sys/kernel/tracing/available_filter_functions\), and kprobe events refuse notrace functions ` +
				`\(CONFIG_KPROBE_EVENTS_ON_NOTRACE is off\)\n$`,
		},
	}
}

// rewrites are the programs whose rewrite (-e -d) in the guest, from the
// loaded module's .ko found on its own, must be the one kdtrace makes on
// the host from the same .ko named with --module.
var rewrites = []string{
	`kinst::kinst_test_inline:entry, kinst::kinst_test_inline:return { @[probefunc, probename] = count(); }`,
	`kinst::kinst_test_both:entry, kinst::kinst_test_both:return { @[probefunc, probename] = count(); }`,
	`kinst::kinst_test_fbtconvert:entry, kinst::kinst_test_fbtconvert:return { @[probefunc, probename] = count(); }`,
}

// kmodScript loads the module, writes the trigger, and runs each case
// between marker lines as guestScript does, stderr apart, then each
// rewrite, then the loop shapes' run.
func kmodScript(cases []kmodCase, release string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "insmod /lib/modules/%s/extra/kinst_test.ko || exit 1\n", release)
	b.WriteString("printf '#!/bin/sh\\necho $1 >/proc/kinst_test\\n' >/tmp/trigger && chmod +x /tmp/trigger || exit 1\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "echo '=== %s'\nt0=$(cut -d' ' -f1 /proc/uptime)\n%s 2>/tmp/err\n", c.name, c.cmd)
		b.WriteString("s=$?\necho \"=== stderr\"\ncat /tmp/err\necho \"=== status $s uptime $t0 $(cut -d' ' -f1 /proc/uptime)\"\n")
	}
	for i, p := range rewrites {
		fmt.Fprintf(&b, "echo '=== rewrite %d'\nkdtrace -e -d -n '%s' 2>/dev/null\n", i, p)
		b.WriteString("echo \"=== stderr\"\necho \"=== status $? uptime 0 0\"\n")
	}
	b.WriteString(loopScript())
	return b.String()
}

// A kmodResult is what one section of the guest's output holds: a
// command's output, its stderr and its exit status.
type kmodResult struct{ out, stderr, status string }

var kmodCaseRE = regexp.MustCompile(`(?s)=== ([^\n]*)\n(.*?)=== stderr\n(.*?)=== status (\d+) uptime ([\d.]+) ([\d.]+)\n`)

// TestGuestModule builds kinst_test.ko against the guest kernel's
// headers, boots the guest once with it in the initramfs at the place
// depmod would look for an out-of-tree module, and runs the ports of
// FreeBSD's four kinst inline tests, then kinst::f:entry and :return
// over functions inlined into loop shapes (checked on the host to be
// what the compiler made), held to the module's own counts. Nothing it
// expects depends on the kernel's build, so it takes the newest 6.1
// kernel whose headers are to be had. The guest has no debug image of
// its kernel: the module's own DWARF answers.
func TestGuestModule(t *testing.T) {
	// Debian's headers build with the kernel's compiler, gcc-12, by
	// that name.
	busybox, cache := guestSetup(t, "make", "gcc-12")
	g := fetchGuestKernel(t, cache, Needs{Headers: true})
	ctx := context.Background()

	dir := t.TempDir()
	start := time.Now()
	ko, err := g.headers.BuildModule(ctx, "testdata/kmod", dir, "kinst_test")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kinst_test.ko built in %v", time.Since(start).Round(time.Millisecond))
	t.Run("loop shapes", func(t *testing.T) { checkLoopShapes(t, ko) })
	kdtrace := buildKdtrace(t, dir)
	// The host's rewrite of each program, from the .ko named: -Z
	// since the host has no such module to match the sites against.
	var wantRewrites []string
	for _, p := range rewrites {
		out, err := exec.Command(kdtrace, "--module", ko, "-Z", "-e", "-d", "-n", p).Output()
		if err != nil {
			t.Fatalf("kdtrace --module %s -e -d -n %q: %v", ko, p, err)
		}
		wantRewrites = append(wantRewrites, string(out))
	}

	cases := kmodCases(g.Release)
	res, err := Run(ctx, Config{
		Image:   g.Image,
		Busybox: busybox,
		Files: map[string]string{
			"bin/kdtrace": kdtrace,
			"lib/modules/" + g.Release + "/extra/kinst_test.ko": ko,
		},
		Script:  kmodScript(cases, g.Release),
		Timeout: 5 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guest wall time %v; output:\n%s", res.Wall.Round(time.Millisecond), res.Output)
	if res.Status != 0 {
		t.Fatalf("the guest's script failed (status %d):\n%s", res.Status, res.Output)
	}
	got := map[string]kmodResult{}
	for _, m := range kmodCaseRE.FindAllStringSubmatch(res.Output, -1) {
		got[m[1]] = kmodResult{m[2], m[3], m[4]}
		t0, _ := strconv.ParseFloat(m[5], 64)
		t1, _ := strconv.ParseFloat(m[6], 64)
		if t1 > 0 {
			t.Logf("%s: %.2f s of guest time", m[1], t1-t0)
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ok := got[c.name]
			if !ok {
				t.Fatalf("no output in the guest's:\n%s", res.Output)
			}
			if r.status != strconv.Itoa(c.status) {
				t.Errorf("exit status %s, want %d; stderr:\n%s", r.status, c.status, r.stderr)
			}
			var lines []string
			for _, l := range strings.Split(r.out, "\n") {
				if l != "" {
					lines = append(lines, l)
				}
			}
			slices.Sort(lines)
			if c.match != nil {
				sorted := strings.Join(lines, "\n") + "\n"
				for _, re := range c.match {
					if !regexp.MustCompile(re).MatchString(sorted) {
						t.Errorf("output does not match %q:\n%s", re, r.out)
					}
				}
			} else {
				want := slices.Clone(c.want)
				slices.Sort(want)
				if diff := cmp.Diff(want, lines); diff != "" {
					t.Errorf("output lines (-want +got):\n%s\nstderr:\n%s", diff, r.stderr)
				}
			}
			if c.stderr == "" && r.stderr != "" || c.stderr != "" && !regexp.MustCompile(c.stderr).MatchString(r.stderr) {
				t.Errorf("stderr does not match %q:\n%s", c.stderr, r.stderr)
			}
		})
	}
	t.Run("loops", func(t *testing.T) {
		run, ok := got["loops"]
		truth, ok2 := got["loop counts"]
		if !ok || !ok2 {
			t.Fatalf("no output in the guest's:\n%s", res.Output)
		}
		checkLoops(t, run, truth, g.Release)
	})
	for i, p := range rewrites {
		t.Run(fmt.Sprintf("rewrite %d", i), func(t *testing.T) {
			r, ok := got[fmt.Sprintf("rewrite %d", i)]
			if !ok {
				t.Fatalf("no output in the guest's:\n%s", res.Output)
			}
			if r.status != "0" {
				t.Errorf("kdtrace -e -d -n %q: exit status %s", p, r.status)
			}
			if diff := cmp.Diff(wantRewrites[i], r.out); diff != "" {
				t.Errorf("kdtrace -e -d -n %q in the guest (-host +guest):\n%s", p, diff)
			}
		})
	}
}
