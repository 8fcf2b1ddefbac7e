// Command guestattach measures, in the QEMU guest of internal/guest,
// how long one probe takes from the tracer's start to its first firing
// and exit: kdtrace's kinst offset, fbt entry and inline kinst probes
// beside bpftrace's kprobe at the same offset and at the entry, all in
// one boot, so that their ratios hold though TCG slows each alike.
//
//	go run ./bench/guestattach [-n runs] [-bpftrace path] [-memory size]
//
// Each tracer runs under the guest's stopwatch (./stopwatch), which
// reads a byte of /dev/zero every millisecond: a vfs_read, which fires
// the probe as soon as it is attached, whose clause exits. The first
// run of each case is the cold one, shown apart: the page cache is
// empty, and the first kdtrace that reads DWARF indexes the debug
// vmlinux into its cache. Then -n more runs, the cases taking turns,
// give the median. A "past BEGIN" line subtracts the tracer's BEGIN
// case, start-up and exit with nothing to attach. One boot with -n 6
// takes about ten minutes.
//
// bpftrace is dynamic: the host's binary goes into the guest with its
// loader and every library ldd names, at the same paths, in the
// uncompressed archive of Config.Data. With -bpftrace none, or no
// bpftrace on the host, only kdtrace's cases run.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kdtrace/kdtrace/internal/guest"
)

// A probeCase is one tracer command timed in the guest.
type probeCase struct {
	name     string
	bpftrace bool   // needs bpftrace in the guest
	cmd      string // a shell command line
	// Shell commands run before and after cmd, outside its time.
	before, after string
}

// hideDebug and showDebug move the debug vmlinux out of bpftrace's
// sight and back: bpftrace built without libbfd (Debian's) cannot check
// that an offset is an instruction boundary and refuses one, --unsafe
// or not, when it finds a vmlinux to check it in; without one it takes
// the offset on trust.
var (
	hideDebug = "mv " + debugPath + " " + debugPath + ".hidden"
	showDebug = "mv " + debugPath + ".hidden " + debugPath
)

// debugPath is where kdtrace, perf and bpftrace look for the vmlinux
// with DWARF.
const debugPath = "/usr/lib/debug/boot/vmlinux-" + release

const release = "6.1.0-56-amd64" // guest.Debian12.Release

var cases = []probeCase{
	// Start-up and exit with no probe to attach: what the probe cases
	// take past it is their attach and first firing.
	{name: "kdtrace BEGIN", cmd: `kdtrace -q -n 'BEGIN { exit(0); }'`},
	{name: "bpftrace BEGIN", bpftrace: true, cmd: `bpftrace -e 'BEGIN { exit(); }'`},
	// Compiling alone: kinst resolves the offset against the text then,
	// fbt reads the function's type.
	{name: "kdtrace -e kinst::vfs_read:5", cmd: `kdtrace -e -n 'kinst::vfs_read:5 { exit(0); }'`},
	{name: "kdtrace -e fbt::vfs_read:entry", cmd: `kdtrace -e -n 'fbt::vfs_read:entry { exit(0); }'`},
	{name: "kdtrace kinst::vfs_read:5", cmd: `kdtrace -q -n 'kinst::vfs_read:5 { exit(0); }'`},
	// Without the debug vmlinux kdtrace checks the offset against the
	// live text alone; bpftrace below, without it, checks nothing.
	{name: "kdtrace kinst::vfs_read:5 no DWARF", cmd: `kdtrace --debug-root /tmp/nodebug -q -n 'kinst::vfs_read:5 { exit(0); }'`},
	{name: "bpftrace kprobe:vfs_read+5", bpftrace: true, cmd: `bpftrace -e 'kprobe:vfs_read+5 { exit(); }'`,
		before: hideDebug, after: showDebug},
	{name: "kdtrace fbt::vfs_read:entry", cmd: `kdtrace -q -n 'fbt::vfs_read:entry { exit(0); }'`},
	{name: "bpftrace kprobe:vfs_read", bpftrace: true, cmd: `bpftrace -e 'kprobe:vfs_read { exit(); }'`},
	// Nine inline copies, nine kprobes: bpftrace has no name for them.
	{name: "kdtrace kinst::fsnotify_access:entry", cmd: `kdtrace -q -n 'kinst::fsnotify_access:entry { exit(0); }'`},
}

func main() {
	runs := flag.Int("n", 5, "timed runs of each case, after the cold one")
	bpftrace := flag.String("bpftrace", "", "the host's bpftrace to carry into the guest (default: bpftrace on $PATH; none to leave it out)")
	memory := flag.String("memory", "4G", "the guest's RAM, in qemu's -m syntax")
	timeout := flag.Duration("timeout", 30*time.Minute, "for the whole boot")
	flag.Parse()
	if *runs < 1 {
		fatalf("-n must be at least 1")
	}
	if *bpftrace == "" {
		if p, err := exec.LookPath("bpftrace"); err == nil {
			*bpftrace = p
		} else {
			fmt.Fprintln(os.Stderr, "guestattach: no bpftrace on $PATH: kdtrace's cases only")
		}
	} else if *bpftrace == "none" {
		*bpftrace = ""
	}
	if err := run(*runs, *bpftrace, *memory, *timeout); err != nil {
		fatalf("%v", err)
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "guestattach: "+format+"\n", args...)
	os.Exit(1)
}

func run(runs int, bpftrace, memory string, timeout time.Duration) error {
	busybox, err := guest.Available()
	if err != nil {
		return err
	}
	ctx := context.Background()
	cache, err := guest.CacheDir()
	if err != nil {
		return err
	}
	img, err := guest.FetchKernel(ctx, guest.Debian12, cache)
	if err != nil {
		return err
	}
	vmlinux, err := guest.FetchDebug(ctx, guest.Debian12, cache)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "guestattach-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	// The debug image without what kdtrace does not read, as
	// internal/guest's test makes it: half the RAM in the guest.
	debug := filepath.Join(dir, "vmlinux")
	if err := command("objcopy", "--remove-section=.rela*", "--remove-section=.debug_frame", vmlinux, debug); err != nil {
		return err
	}
	kdtrace := filepath.Join(dir, "kdtrace")
	stopwatch := filepath.Join(dir, "stopwatch")
	for bin, pkg := range map[string]string{
		kdtrace:   "github.com/kdtrace/kdtrace/cmd/kdtrace",
		stopwatch: "github.com/kdtrace/kdtrace/bench/guestattach/stopwatch",
	} {
		if err := command("env", "CGO_ENABLED=0", "go", "build", "-o", bin, pkg); err != nil {
			return err
		}
	}
	if guest.Debian12.Release != release {
		return fmt.Errorf("guest kernel %s, not the %s the probe offsets are for", guest.Debian12.Release, release)
	}
	data := map[string]string{debugPath: debug}
	var chmod []string
	if bpftrace != "" {
		files, err := dynamicFiles(bpftrace)
		if err != nil {
			return err
		}
		for g, h := range files {
			data[g] = h
		}
		// Config.Data's files are not executable: the script makes
		// bpftrace and its loader so.
		chmod = []string{"/usr/bin/bpftrace", loader(files)}
		data["usr/bin/bpftrace"] = bpftrace
	}
	var active []probeCase
	for _, c := range cases {
		if !c.bpftrace || bpftrace != "" {
			active = append(active, c)
		}
	}

	res, err := guest.Run(ctx, guest.Config{
		Image:   img,
		Busybox: busybox,
		Files:   map[string]string{"bin/kdtrace": kdtrace, "bin/stopwatch": stopwatch},
		Data:    data,
		Memory:  memory,
		Script:  script(active, runs, chmod),
		Timeout: timeout,
	})
	if err != nil {
		return err
	}
	if res.Status != 0 {
		return fmt.Errorf("guest script exited %d:\n%s", res.Status, res.Output)
	}
	return report(os.Stdout, active, runs, res)
}

// command runs a command on the host, its output shown on failure.
func command(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", name, err, out)
	}
	return nil
}

// dynamicFiles returns the guest paths and host files of what the
// dynamic program prog needs to run: its loader and the libraries ldd
// lists, each under the name the loader looks for (the soname, in the
// directory ldd found it in).
func dynamicFiles(prog string) (map[string]string, error) {
	out, err := exec.Command("ldd", prog).Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %v", prog, err)
	}
	files := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			files[filepath.Join(filepath.Dir(f[2]), f[0])] = f[2]
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			files[f[0]] = f[0] // the loader, at the path PT_INTERP names
		case len(f) >= 3 && f[1] == "=>" && f[2] == "not":
			return nil, fmt.Errorf("ldd %s: %s not found", prog, f[0])
		}
	}
	if loader(files) == "" {
		return nil, fmt.Errorf("ldd %s: no loader listed (a static program?)", prog)
	}
	return files, nil
}

// loader returns the dynamic loader's guest path among files.
func loader(files map[string]string) string {
	for g := range files {
		if strings.HasPrefix(filepath.Base(g), "ld-linux") {
			return g
		}
	}
	return ""
}

// script runs the cold run of each case, then runs rounds in which
// each case runs once, printing a line
//
//	RESULT <case index> <round> <ms> <status>
//
// per run, round 0 the cold one, and the tracer's output after a run
// that failed.
func script(cs []probeCase, runs int, chmod []string) string {
	var b strings.Builder
	b.WriteString("export PATH=/bin:/usr/bin LD_LIBRARY_PATH=/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu\n")
	b.WriteString("mkdir -p /tmp/nodebug\n")
	if len(chmod) > 0 {
		fmt.Fprintf(&b, "chmod 755 %s\n", strings.Join(chmod, " "))
	}
	for round := range runs + 1 {
		for i, c := range cs {
			if c.before != "" {
				fmt.Fprintln(&b, c.before)
			}
			fmt.Fprintf(&b, "r=$(stopwatch -timeout 3m sh -c %s 2>/tmp/err)\n", quote(c.cmd))
			if c.after != "" {
				fmt.Fprintln(&b, c.after)
			}
			fmt.Fprintf(&b, "echo \"RESULT %d %d $r\"\n", i, round)
			b.WriteString("case \"$r\" in *\" 0\") ;; *) sed 's/^/\t/' /tmp/err ;; esac\n")
		}
	}
	return b.String()
}

// quote quotes s for the shell.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// report prints each case's cold time and the median, least and most of
// its warm runs, and the ratio of each bpftrace case to the kdtrace case
// before it. A case that failed is shown with the first failure's
// output.
func report(w io.Writer, cs []probeCase, runs int, res *guest.Result) error {
	cold := make([]float64, len(cs))
	warm := make([][]float64, len(cs))
	failed := make([]int, len(cs))
	why := make([][]string, len(cs))
	last := -1 // the case whose failure the tracer output lines belong to
	for _, line := range strings.Split(res.Output, "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[0] != "RESULT" {
			if last >= 0 && strings.HasPrefix(line, "\t") {
				why[last] = append(why[last], line)
			}
			continue
		}
		i, err1 := strconv.Atoi(f[1])
		round, err2 := strconv.Atoi(f[2])
		ms, err3 := strconv.ParseFloat(f[3], 64)
		if err := errors.Join(err1, err2, err3); err != nil || i >= len(cs) {
			return fmt.Errorf("bad result line %q", line)
		}
		last = -1
		switch {
		case f[4] != "0":
			failed[i]++
			if failed[i] == 1 {
				last = i
				why[i] = append(why[i], fmt.Sprintf("\texit status %s after %.0f ms, output:", f[4], ms))
			}
		case round == 0:
			cold[i] = ms
		default:
			warm[i] = append(warm[i], ms)
		}
	}
	fmt.Fprintf(w, "guest: %s under TCG, boot to power-off %v\n", guest.Debian12.Release, res.Wall.Round(time.Second))
	fmt.Fprintf(w, "%-38s %9s %9s %9s %9s %s\n", "start to first firing and exit", "cold ms", "median ms", "min ms", "max ms", "runs")
	medians := make([]float64, len(cs))
	for i, c := range cs {
		if failed[i] > 0 {
			fmt.Fprintf(w, "%-38s failed %d of %d runs:\n%s\n", c.name, failed[i], runs+1, strings.Join(why[i], "\n"))
		}
		if len(warm[i]) == 0 {
			continue
		}
		slices.Sort(warm[i])
		medians[i] = warm[i][len(warm[i])/2]
		fmt.Fprintf(w, "%-38s %9.0f %9.0f %9.0f %9.0f %d\n", c.name, cold[i], medians[i], warm[i][0], warm[i][len(warm[i])-1], len(warm[i]))
	}
	// What a probe costs past its tracer's start-up and exit.
	begin := map[string]float64{}
	for i, c := range cs {
		tool, probe, _ := strings.Cut(c.name, " ")
		if probe == "BEGIN" {
			begin[tool] = medians[i]
		} else if b, ok := begin[tool]; ok && b > 0 && medians[i] > 0 {
			fmt.Fprintf(w, "median %s past %s BEGIN's: %.0f ms\n", c.name, tool, medians[i]-b)
		}
	}
	for i, c := range cs {
		if c.bpftrace && i > 0 && !cs[i-1].bpftrace && medians[i] > 0 && medians[i-1] > 0 {
			fmt.Fprintf(w, "median %s / %s: %.2f\n", c.name, cs[i-1].name, medians[i]/medians[i-1])
		}
	}
	return nil
}
