package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/debuginfod/debuginfodtest"
	"github.com/kdtrace/kdtrace/internal/gcctest"
	"github.com/kdtrace/kdtrace/internal/guest"
	"github.com/kdtrace/kdtrace/internal/kdtracebin"
)

// debuginfodEnv is the environment of a kdtrace that asks the servers
// urls (none when empty), with caches of its own.
func debuginfodEnv(t *testing.T, cache, urls string) []string {
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "DEBUGINFOD_") && !strings.HasPrefix(e, "XDG_CACHE_HOME=") {
			env = append(env, e)
		}
	}
	env = append(env, "XDG_CACHE_HOME="+t.TempDir(), "DEBUGINFOD_CACHE_PATH="+cache)
	if urls != "" {
		env = append(env, "DEBUGINFOD_URLS="+urls)
	}
	return env
}

// cacheTemps lists the files of the debuginfod cache's build-id
// directories other than whole downloads: temporary files.
func cacheTemps(cache string) []string {
	var temps []string
	matches, _ := filepath.Glob(filepath.Join(cache, "*", "*"))
	for _, m := range matches {
		if b := filepath.Base(m); b != "debuginfo" && b != "executable" {
			temps = append(temps, m)
		}
	}
	return temps
}

// buildWithHelper builds kdtrace into a temporary directory, and
// kdtrace-debuginfod, which makes its downloads, beside it.
func buildWithHelper(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "kdtrace")
	kdtracebin.Build(t, bin)
	return bin
}

// downloading reports whether a temporary file of the debuginfod cache
// has data.
func downloading(cache string) bool {
	for _, tmp := range cacheTemps(cache) {
		if fi, err := os.Stat(tmp); err == nil && fi.Size() > 0 {
			return true
		}
	}
	return false
}

// processesOf returns the processes that run the program at path.
func processesOf(path string) []string {
	var pids []string
	exes, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, exe := range exes {
		if p, err := os.Readlink(exe); err == nil && p == path {
			pids = append(pids, filepath.Base(filepath.Dir(exe)))
		}
	}
	return pids
}

var aggCount = regexp.MustCompile(`(?m)^\s+([0-9]+)\s*$`)

// TestDebuginfodPidInline traces the inlined function of a program
// whose debug file only elfutils' debuginfod has: without
// DEBUGINFOD_URLS the probe is refused, with it every call counts; with
// the server stopped and a new cache, a probe that needs no DWARF still
// runs after a warning naming the server, and the inline probe's
// failure names it. locals-> reads the program's variables from the
// same debug file.
func TestDebuginfodPidInline(t *testing.T) {
	needTracing(t)
	dir, served := t.TempDir(), t.TempDir()
	prog, id := debuginfodtest.Fixture(t, dir, served)
	srv := debuginfodtest.Start(t, served, id)
	bin := buildWithHelper(t)
	cache := filepath.Join(t.TempDir(), "debuginfod")
	const calls = 1000
	cmdline := fmt.Sprintf("%s %d", prog, calls)
	script := `pid$target:a.out:inl:entry { @ = count(); }`

	run := func(urls, cache, script string) (string, string, error) {
		cmd := exec.Command(bin, "-q", "-c", cmdline, "-n", script)
		cmd.Env = debuginfodEnv(t, cache, urls)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	if out, errs, err := run("", cache, script); err == nil {
		t.Fatalf("without DEBUGINFOD_URLS the inline probe ran: %s%s", out, errs)
	}
	out, errs, err := run(srv.URL, cache, script)
	if err != nil {
		t.Fatalf("kdtrace: %v\n%s%s", err, out, errs)
	}
	m := aggCount.FindAllStringSubmatch(out, -1)
	if len(m) == 0 || m[len(m)-1][1] != fmt.Sprint(calls) {
		t.Errorf("counted %v, want %d calls of inl; output:\n%s%s", m, calls, out, errs)
	}
	if _, err := os.Stat(filepath.Join(cache, id, "debuginfo")); err != nil {
		t.Errorf("the debug file is not in the cache: %v", err)
	}
	// Stripped of its symbols too, as distributions ship programs: the
	// rewrite's caller, step, is found in the debug file's symbols.
	all := filepath.Join(t.TempDir(), "loop")
	gcctest.Run(t, ".", "objcopy", "--strip-all", prog, all)
	cmdline = fmt.Sprintf("%s %d", all, calls)
	out, errs, err = run(srv.URL, cache, script)
	if m := aggCount.FindAllStringSubmatch(out, -1); err != nil || len(m) == 0 || m[len(m)-1][1] != fmt.Sprint(calls) {
		t.Errorf("objcopy --strip-all: %v, counted %v, want %d; output:\n%s%s", err, m, calls, out, errs)
	}
	cmdline = fmt.Sprintf("%s %d", prog, calls)
	// locals-> reads step's parameter from the same debug file: the
	// loop passes 0 to 999.
	locals := `pid$target:a.out:step:entry { @ = sum(locals->x); }`
	if out, errs, err := run("", filepath.Join(t.TempDir(), "none"), locals); err == nil {
		t.Errorf("without DEBUGINFOD_URLS locals-> compiled: %s%s", out, errs)
	}
	out, errs, err = run(srv.URL, cache, locals)
	if m := aggCount.FindAllStringSubmatch(out, -1); err != nil || len(m) == 0 || m[len(m)-1][1] != fmt.Sprint(calls*(calls-1)/2) {
		t.Errorf("sum(locals->x): %v, %v, want %d; output:\n%s%s", err, m, calls*(calls-1)/2, out, errs)
	}

	srv.Stop()
	down := filepath.Join(t.TempDir(), "debuginfod")
	out, errs, err = run(srv.URL, down, `pid$target:a.out:main:entry { @ = count(); }`)
	if err != nil || !strings.Contains(errs, "warning") || !strings.Contains(errs, srv.URL) {
		t.Errorf("server down, a probe that needs no DWARF: %v; want a run with a warning naming %s; output:\n%s%s", err, srv.URL, out, errs)
	}
	if m := aggCount.FindStringSubmatch(out); m == nil || m[1] != "1" {
		t.Errorf("main:entry counted %v, want 1", m)
	}
	if out, errs, err := run(srv.URL, down, script); err == nil || !strings.Contains(errs, srv.URL) {
		t.Errorf("server down, the inline probe: %v; want a failure naming %s; output:\n%s%s", err, srv.URL, out, errs)
	}
}

// TestDebuginfodKernel compiles kinst::add_rchar:entry against a copy
// of the guest's kernel with its DWARF stripped: refused without
// DEBUGINFOD_URLS, and with the debug image from elfutils' debuginfod,
// the rewrite is the one the unstripped image gives.
func TestDebuginfodKernel(t *testing.T) {
	vmlinux, ok := guest.CachedDebug()
	if !ok {
		t.Skip("the guest's debug vmlinux is not in the cache (the guest tests fetch it)")
	}
	gcctest.Need(t, "objcopy", "readelf")
	out, err := exec.Command("readelf", "-n", vmlinux).Output()
	if err != nil {
		t.Fatalf("readelf -n: %v", err)
	}
	m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s has no build-id", vmlinux)
	}
	id := string(m[1])
	served := t.TempDir()
	if err := os.Symlink(vmlinux, filepath.Join(served, "vmlinux")); err != nil {
		t.Fatal(err)
	}
	stripped := filepath.Join(t.TempDir(), "vmlinux")
	gcctest.Run(t, ".", "objcopy", "--strip-debug", vmlinux, stripped)
	bin := buildWithHelper(t)
	cache := filepath.Join(t.TempDir(), "debuginfod")
	kdtrace := func(kernel, urls string) (string, error) {
		cmd := exec.Command(bin, "--kernel", kernel, "-e", "-d", "-n", "kinst::add_rchar:entry")
		cmd.Env = debuginfodEnv(t, cache, urls)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			return stdout.String() + stderr.String(), err
		}
		return stdout.String(), nil
	}
	want, err := kdtrace(vmlinux, "")
	if err != nil {
		t.Fatalf("unstripped: %v\n%s", err, want)
	}
	if out, err := kdtrace(stripped, ""); err == nil {
		t.Fatalf("the stripped kernel compiled without DEBUGINFOD_URLS:\n%s", out)
	}
	srv := debuginfodtest.Start(t, served, id)
	got, err := kdtrace(stripped, srv.URL)
	if err != nil {
		t.Fatalf("stripped, with debuginfod: %v\n%s", err, got)
	}
	if got != want {
		t.Errorf("rewrite with the debug image from debuginfod:\n%s\nwant, from the unstripped image:\n%s", got, want)
	}
	// Warm: the server stopped, the cache has it.
	srv.Stop()
	if got, err := kdtrace(stripped, srv.URL); err != nil || got != want {
		t.Errorf("warm, server stopped: %v\n%s", err, got)
	}
	// A new cache and the server stopped: the error names it.
	cache = filepath.Join(t.TempDir(), "debuginfod")
	if out, err := kdtrace(stripped, srv.URL); err == nil || !strings.Contains(out, srv.URL) || !strings.Contains(out, "connection refused") {
		t.Errorf("server down: %v; want a failure naming %s:\n%s", err, srv.URL, out)
	}
	// A plain offset needs no DWARF: a warning, and the run goes on.
	cmd := exec.Command(bin, "--kernel", stripped, "-e", "-n", "kinst::vfs_read:0")
	cmd.Env = debuginfodEnv(t, filepath.Join(t.TempDir(), "debuginfod"), srv.URL)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "warning: kinst without the kernel's DWARF: debuginfod: ") || !strings.Contains(string(out), srv.URL) {
		t.Errorf("server down, kinst::vfs_read:0: %v; want a warning naming %s:\n%s", err, srv.URL, out)
	}
}

// A stalled is kdtrace downloading from a server that stalls.
type stalled struct {
	cmd       *exec.Cmd
	stderr    *bytes.Buffer
	helper    string // the helper's program
	helperPID string // the one process of it, downloading
	cache, id string // the debuginfod cache, the file's build-id
}

// stalledDownload starts kdtrace compiling a pid inline probe of a
// program whose debug file only a server has, which stalls halfway
// through it, and waits for the download to begin.
func stalledDownload(t *testing.T) stalled {
	t.Helper()
	dir, served := t.TempDir(), t.TempDir()
	prog, id := debuginfodtest.Fixture(t, dir, served)
	body, err := os.ReadFile(filepath.Join(served, "loop.debug"))
	if err != nil {
		t.Fatal(err)
	}
	url := debuginfodtest.SlowServer(t, body, nil, nil)
	bin := buildWithHelper(t)
	helper := filepath.Join(filepath.Dir(bin), "kdtrace-debuginfod")
	cache := filepath.Join(t.TempDir(), "debuginfod")
	cmd := exec.Command(bin, "-e", "-c", prog, "-n", "pid$target:a.out:inl:entry")
	cmd.Env = debuginfodEnv(t, cache, url)
	stderr := new(bytes.Buffer)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the first half of the file in the download's temporary
	// file.
	deadline := time.Now().Add(time.Minute)
	for !downloading(cache) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no download began; stderr:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	pids := processesOf(helper)
	if len(pids) != 1 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("%d processes of %s download, want 1", len(pids), helper)
	}
	return stalled{cmd, stderr, helper, pids[0], cache, id}
}

// TestDebuginfodInterrupt sends SIGINT to kdtrace while it downloads a
// debug file from a server that stalls halfway: kdtrace ends at once,
// as interrupted, having ended its helper and leaving no partial file
// in the cache.
func TestDebuginfodInterrupt(t *testing.T) {
	s := stalledDownload(t)
	s.cmd.Process.Signal(syscall.SIGINT)
	err := s.cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 128+int(syscall.SIGINT) || !strings.Contains(s.stderr.String(), "interrupted") {
		t.Errorf("kdtrace ended with %v, want status %d and a word that it was interrupted; stderr:\n%s", err, 128+int(syscall.SIGINT), s.stderr.String())
	}
	if pids := processesOf(s.helper); len(pids) != 0 {
		t.Errorf("%s still runs as %v after kdtrace ended", s.helper, pids)
	}
	if temps := cacheTemps(s.cache); len(temps) != 0 {
		t.Errorf("left in the cache: %v", temps)
	}
	if _, err := os.Stat(filepath.Join(s.cache, s.id)); err == nil {
		t.Errorf("the build-id directory is left in the cache")
	}
}

// TestDebuginfodKilled kills kdtrace with SIGKILL while its helper
// downloads from a server that stalls: the helper, whose standard input
// ended with kdtrace, ends too.
func TestDebuginfodKilled(t *testing.T) {
	s := stalledDownload(t)
	s.cmd.Process.Kill()
	s.cmd.Wait()
	for deadline := time.Now().Add(10 * time.Second); len(processesOf(s.helper)) != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			if n, err := strconv.Atoi(s.helperPID); err == nil {
				syscall.Kill(n, syscall.SIGKILL)
			}
			t.Fatalf("%s (process %s) still runs after kdtrace was killed", s.helper, s.helperPID)
		}
	}
}
