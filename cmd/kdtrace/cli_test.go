package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/version"
)

// TestCommandLine checks what a new user meets first: files named on
// the command line that cannot be used, --help, and unknown options:
// the exit status, and what goes to stdout and to stderr.
func TestCommandLine(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "passwd")
	os.WriteFile(text, []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644)
	missing := filepath.Join(dir, "nonexistent")
	var usageText bytes.Buffer
	usage(&usageText, "kdtrace")
	tests := []struct {
		args   []string
		status int
		stdout string
		stderr string
	}{
		// A file the user names is used, or the run stops, even when
		// the program needs nothing from it.
		{args: []string{"--kernel", missing, "-e", "-n", "BEGIN"}, status: 2,
			stderr: "kdtrace: --kernel: " + missing + ": no such file or directory\n"},
		{args: []string{"--kernel", text, "-e", "-n", "BEGIN"}, status: 2,
			stderr: "kdtrace: --kernel: " + text + ": not an ELF file\n"},
		{args: []string{"--kernel", dir, "-e", "-n", "BEGIN"}, status: 2,
			stderr: "kdtrace: --kernel: " + dir + ": is a directory\n"},
		{args: []string{"--module", missing, "-e", "-n", "BEGIN"}, status: 2,
			stderr: "kdtrace: --module: " + missing + ": no such file or directory\n"},
		{args: []string{"--module", text, "-e", "-n", "BEGIN"}, status: 2,
			stderr: "kdtrace: --module: " + text + ": not an ELF file\n"},
		{args: []string{"--btf", missing, "-e", "-n", "BEGIN"}, status: 2,
			stderr: "kdtrace: --btf: " + missing + ": no such file or directory\n"},
		{args: []string{"--btf", text, "-e", "-n", "BEGIN"}, status: 2,
			stderr: "kdtrace: --btf: " + text + ": not BTF: magic 0x6f72\n"},
		{args: []string{"--debug-root", missing, "-e", "-n", "BEGIN"}, status: 2,
			stderr: "kdtrace: --debug-root: " + missing + ": no such file or directory\n"},
		{args: []string{"--debug-root", text, "-e", "-n", "BEGIN"}, status: 2,
			stderr: "kdtrace: --debug-root: " + text + ": not a directory\n"},
		{args: []string{"--btf", "none", "--debug-root", dir, "-e", "-n", "BEGIN"}, status: 0},
		// --help, as GNU-style users expect; other unknown options as
		// dtrace.
		{args: []string{"--help"}, status: 0, stdout: usageText.String()},
		{args: []string{"-e", "--help", "-n", "BEGIN"}, status: 0, stdout: usageText.String()},
		{args: []string{"--bogus"}, status: 2, stderr: "kdtrace: illegal option -- bogus\n" + usageText.String()},
		{args: []string{"-k"}, status: 2, stderr: "kdtrace: illegal option -- k\n" + usageText.String()},
		{args: []string{"-s"}, status: 2, stderr: "kdtrace: option requires an argument -- s\n" + usageText.String()},
		{args: []string{"--kernel"}, status: 2, stderr: "kdtrace: option requires an argument -- kernel\n" + usageText.String()},
		// The command is created, and killed when the run stops.
		{args: []string{"-c", "ls"}, status: 1, stderr: "kdtrace: no probes specified\n"},
		// dtrace's line, with kdtrace's version and commit after it
		// (TestVersionStamped checks what they say).
		{args: []string{"-V"}, status: 0, stdout: "kdtrace: Sun D 1.13 (" + version.String() + ")\n"},
		{args: []string{"--version"}, status: 0, stdout: version.String() + "\n"},
		{args: []string{"-e", "--version", "-n", "BEGIN"}, status: 0, stdout: version.String() + "\n"},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		st := run(append([]string{"kdtrace"}, tt.args...), &stdout, &stderr)
		if st != tt.status {
			t.Errorf("%q: exit %d, want %d (%s)", tt.args, st, tt.status, stderr.String())
		}
		if diff := cmp.Diff(tt.stdout, stdout.String()); diff != "" {
			t.Errorf("%q: stdout (-want +got):\n%s", tt.args, diff)
		}
		if diff := cmp.Diff(tt.stderr, stderr.String()); diff != "" {
			t.Errorf("%q: stderr (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestOptionsDocumented checks that getopt's options, the usage text
// and the manual page's SYNOPSIS and OPTIONS agree: every option the
// command takes is in all of them, and none is in them that it does
// not take.
func TestOptionsDocumented(t *testing.T) {
	var takes []string
	for i := 0; i < len(optstring); i++ {
		if optstring[i] != ':' {
			takes = append(takes, "-"+optstring[i:i+1])
		}
	}
	for name := range longOptions {
		takes = append(takes, "--"+name)
	}
	takes = append(takes, "--help", "--version")
	var u bytes.Buffer
	usage(&u, "kdtrace")
	usageOpts := optionsIn(u.String())
	man, err := os.ReadFile(filepath.Join("..", "..", "doc", "kdtrace.1"))
	if err != nil {
		t.Fatal(err)
	}
	page := strings.ReplaceAll(string(man), `\-`, "-")
	_, rest, ok := strings.Cut(page, ".SH SYNOPSIS")
	if !ok {
		t.Fatal("kdtrace.1 has no SYNOPSIS")
	}
	synopsis, rest, _ := strings.Cut(rest, ".SH DESCRIPTION")
	_, options, _ := strings.Cut(rest, ".SH OPTIONS")
	options, _, _ = strings.Cut(options, "\n.SH ")
	synOpts := optionsIn(regexp.MustCompile(`\\f.`).ReplaceAllString(synopsis, ""))
	// In OPTIONS each option heads a .TP paragraph.
	optOpts := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\.BI? (--[a-z-]+|-[A-Za-z0-9])`).FindAllStringSubmatch(options, -1) {
		optOpts[m[1]] = true
	}
	for where, got := range map[string]map[string]bool{"usage": usageOpts, "SYNOPSIS": synOpts, "OPTIONS": optOpts} {
		for _, o := range takes {
			if !got[o] {
				t.Errorf("%s lacks %s", where, o)
			}
		}
		for o := range got {
			if !slices.Contains(takes, o) {
				t.Errorf("%s has %s, which the command does not take", where, o)
			}
		}
	}
}

// optionsIn returns the options a synopsis names: -x, grouped flags
// [-abc], -32|-64 and --long.
func optionsIn(s string) map[string]bool {
	got := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?:^|[\s\[|])(--?)([A-Za-z0-9][A-Za-z0-9-]*)`).FindAllStringSubmatch(s, -1) {
		switch {
		case m[1] == "--":
			got["--"+m[2]] = true
		case m[2] == "32" || m[2] == "64":
			got["-"+m[2][:1]] = true
		default:
			for _, c := range m[2] {
				got["-"+string(c)] = true
			}
		}
	}
	return got
}

// TestManExamples runs the command lines of the manual page's EXAMPLES
// as they are written, from the top of the source tree: each must
// succeed.
func TestManExamples(t *testing.T) {
	man, err := os.ReadFile(filepath.Join("..", "..", "doc", "kdtrace.1"))
	if err != nil {
		t.Fatal(err)
	}
	_, examples, ok := strings.Cut(string(man), ".SH EXAMPLES")
	if !ok {
		t.Fatal("kdtrace.1 has no EXAMPLES")
	}
	examples, _, _ = strings.Cut(examples, "\n.SH ")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	unroff := strings.NewReplacer(`\-`, "-", `\e`, `\`)
	n := 0
	for _, line := range strings.Split(examples, "\n") {
		line = unroff.Replace(line)
		if !strings.HasPrefix(line, "kdtrace ") {
			continue
		}
		n++
		args := shellWords(t, line)
		for i, a := range args {
			if i > 0 && args[i-1] == "-o" {
				args[i] = filepath.Join(t.TempDir(), a) // not into the tree
			}
		}
		var stdout, stderr bytes.Buffer
		if st := run(args, &stdout, &stderr); st != 0 {
			if os.Geteuid() != 0 && strings.Contains(stderr.String(), "could not enable tracing") {
				t.Logf("%s: tracing needs root: %s", line, stderr.String())
				continue
			}
			if strings.Contains(line, "syscall::") && strings.Contains(stderr.String(), "does not match any probes") {
				t.Logf("%s: this system has no syscall provider: %s", line, stderr.String())
				continue
			}
			t.Errorf("%s: exit %d: %s", line, st, stderr.String())
		}
	}
	if n < 6 {
		t.Errorf("EXAMPLES has %d command lines, want at least 6", n)
	}
}

// shellWords splits a command line as sh does for the quoting the
// examples use: words separated by spaces, '…' quoted.
func shellWords(t *testing.T, line string) []string {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
			}
			inWord = false
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %s", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}
