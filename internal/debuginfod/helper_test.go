package debuginfod

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kdtrace/kdtrace/internal/debuginfod/debuginfodtest"
)

// TestFindHelper: kdtrace-debuginfod is looked for beside the running
// program, its links resolved, then in $PATH; one that is no regular
// file, that its group or others may write, or that another user owns
// is refused; none is an error that says how to install it.
func TestFindHelper(t *testing.T) {
	type setup struct {
		exe  string // the running program
		path string // $PATH
	}
	file := func(t *testing.T, dir string, mode os.FileMode) string {
		p := filepath.Join(dir, helperName)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, bin, other string) setup
		want    string // the path found; "" for an error
		wantErr string
	}{
		{"beside", func(t *testing.T, bin, other string) setup {
			file(t, bin, 0o755)
			file(t, other, 0o755)
			return setup{filepath.Join(bin, "kdtrace"), other}
		}, "bin/" + helperName, ""},
		{"beside the link's target", func(t *testing.T, bin, other string) setup {
			file(t, bin, 0o755)
			link := filepath.Join(other, "kdtrace")
			if err := os.Symlink(filepath.Join(bin, "kdtrace"), link); err != nil {
				t.Fatal(err)
			}
			return setup{link, ""}
		}, "bin/" + helperName, ""},
		{"in PATH", func(t *testing.T, bin, other string) setup {
			file(t, other, 0o755)
			return setup{filepath.Join(bin, "kdtrace"), other}
		}, "other/" + helperName, ""},
		{"executable unknown", func(t *testing.T, bin, other string) setup {
			file(t, other, 0o755)
			return setup{"", other}
		}, "other/" + helperName, ""},
		{"nowhere", func(t *testing.T, bin, other string) setup {
			return setup{filepath.Join(bin, "kdtrace"), other}
		}, "", "kdtrace-debuginfod, which makes kdtrace's downloads, was found neither next to kdtrace (in BIN) nor in $PATH: install it with kdtrace (go build -o DIR ./cmd/... puts both in DIR)"},
		{"not executable in PATH", func(t *testing.T, bin, other string) setup {
			file(t, other, 0o644)
			return setup{filepath.Join(bin, "kdtrace"), other}
		}, "", "was found neither next to kdtrace (in BIN) nor in $PATH"},
		{"a directory", func(t *testing.T, bin, other string) setup {
			os.Mkdir(filepath.Join(bin, helperName), 0o755)
			file(t, other, 0o755)
			return setup{filepath.Join(bin, "kdtrace"), other}
		}, "", "refusing BIN/kdtrace-debuginfod, which is not a regular file (d---------)"},
		{"group-writable", func(t *testing.T, bin, other string) setup {
			file(t, bin, 0o775)
			return setup{filepath.Join(bin, "kdtrace"), ""}
		}, "", "refusing BIN/kdtrace-debuginfod, which its group or others may write (mode -rwxrwxr-x)"},
		{"writable by others, in PATH", func(t *testing.T, bin, other string) setup {
			file(t, other, 0o757)
			return setup{filepath.Join(bin, "kdtrace"), other}
		}, "", "refusing OTHER/kdtrace-debuginfod, which its group or others may write (mode -rwxr-xrwx)"},
		{"another user's", func(t *testing.T, bin, other string) setup {
			if os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			if err := os.Chown(file(t, bin, 0o755), 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return setup{filepath.Join(bin, "kdtrace"), ""}
		}, "", "refusing BIN/kdtrace-debuginfod, owned by uid 65534, neither root nor kdtrace's user (uid 0)"},
		{"in a directory others may write", func(t *testing.T, bin, other string) setup {
			file(t, other, 0o755)
			if err := os.Chmod(other, 0o777); err != nil {
				t.Fatal(err)
			}
			return setup{filepath.Join(bin, "kdtrace"), other}
		}, "", "refusing OTHER/kdtrace-debuginfod, in OTHER, which its group or others may write (mode -rwxrwxrwx)"},
		{"in a sticky directory others may write", func(t *testing.T, bin, other string) setup {
			file(t, other, 0o755)
			if err := os.Chmod(other, 0o777|os.ModeSticky); err != nil {
				t.Fatal(err)
			}
			return setup{filepath.Join(bin, "kdtrace"), other}
		}, "other/" + helperName, ""},
		{"in another user's directory", func(t *testing.T, bin, other string) setup {
			if os.Geteuid() != 0 {
				t.Skip("giving a directory to another user needs root")
			}
			file(t, other, 0o755)
			if err := os.Chown(other, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return setup{filepath.Join(bin, "kdtrace"), other}
		}, "", "refusing OTHER/kdtrace-debuginfod, in OTHER, owned by uid 65534"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			bin, other := filepath.Join(root, "bin"), filepath.Join(root, "other")
			os.Mkdir(bin, 0o755)
			os.Mkdir(other, 0o755)
			if err := os.WriteFile(filepath.Join(bin, "kdtrace"), nil, 0o755); err != nil {
				t.Fatal(err)
			}
			s := tt.setup(t, bin, other)
			t.Setenv("PATH", s.path)
			got, err := findHelper(s.exe)
			if tt.wantErr != "" {
				want := strings.NewReplacer("BIN", bin, "OTHER", other).Replace(tt.wantErr)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("findHelper: %q, %v; want the error %q", got, err, want)
				}
				return
			}
			if want := filepath.Join(root, tt.want); err != nil || got != want {
				t.Errorf("findHelper: %q, %v; want %s", got, err, want)
			}
		})
	}
}

// TestHelperNotNeeded: a lookup that needs no download, the file being
// in the cache or its absence remembered, does not look for the
// helper; one that does fails, without it, with the reason, and
// without asking a server or leaving a build-id directory.
func TestHelperNotNeeded(t *testing.T) {
	const id = "3333333333333333333333333333333333333333"
	const missing = "4444444444444444444444444444444444444444"
	good := elfWithID(t, id)
	cache := filepath.Join(t.TempDir(), "cache")
	s := startServer(t, map[string][]byte{id + "/debuginfo": good})
	fill := &Client{URLs: []string{s.URL}, CachePath: cache, Transfer: debuginfodtest.InProcess}
	if _, err := fill.Find(context.Background(), mustHex(t, id), Debuginfo); err != nil {
		t.Fatal(err)
	}
	if _, err := fill.Find(context.Background(), mustHex(t, missing), Debuginfo); err == nil {
		t.Fatal("found the missing build-id")
	}
	hits := s.hits.Load()

	t.Setenv("PATH", t.TempDir()) // and none beside the test
	var verbose bytes.Buffer
	c := &Client{URLs: []string{s.URL}, CachePath: cache, Verbose: &verbose}
	if _, err := c.Find(context.Background(), mustHex(t, id), Debuginfo); err != nil {
		t.Errorf("cached: %v", err)
	}
	var e *Error
	if _, err := c.Find(context.Background(), mustHex(t, missing), Debuginfo); !errors.As(err, &e) || !e.Miss {
		t.Errorf("remembered miss: %v, want the miss", err)
	}
	const other = "5555555555555555555555555555555555555555"
	_, err := c.Find(context.Background(), mustHex(t, other), Debuginfo)
	if !errors.As(err, &e) || !strings.Contains(err.Error(), "kdtrace-debuginfod, which makes kdtrace's downloads, was found neither") || e.NotFound() {
		t.Errorf("download: %v, want the helper not found", err)
	}
	if _, err := os.Stat(filepath.Join(cache, other)); err == nil {
		t.Error("the build-id directory was left")
	}
	if n := s.hits.Load(); n != hits {
		t.Errorf("the server was asked %d times more", n-hits)
	}
	if strings.Contains(verbose.String(), "downloading with") {
		t.Errorf("verbose output %q says a helper was found", verbose.String())
	}
}

// TestHelperFailures: a helper whose reports are garbled, or that
// crashes, fails the download with the reason, and its temporary file
// is removed.
func TestHelperFailures(t *testing.T) {
	const id = "6666666666666666666666666666666666666666"
	tests := []struct {
		name    string
		script  string
		wantErr string
	}{
		{"garbled", "echo version 1; echo status 200 OK; echo progress 10; echo gibberish; exec sleep 60",
			`kdtrace-debuginfod's reports: line 4: unknown report "gibberish"`},
		{"old protocol", "echo version 0; exec sleep 60",
			"kdtrace-debuginfod's reports: line 1: protocol version 0, not kdtrace's 1"},
		{"crash", "echo version 1; echo status 200 OK; echo 'panic: oops' >&2; echo more >&2; exit 2",
			"kdtrace-debuginfod: exit status 2: panic: oops"},
		{"silent end", "echo version 1; echo status 200 OK",
			"kdtrace-debuginfod's reports: after line 2: the reports end before done: unexpected EOF"},
		{"stopped by its end", "printf 'version 1\\nstatus 200 OK\\nprogress 3\\n'; echo abc >&3; kill -STOP $$",
			"DEBUGINFOD_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			helper := filepath.Join(dir, helperName)
			if err := os.WriteFile(helper, []byte("#!/bin/sh\n"+tt.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			cache := filepath.Join(dir, "cache")
			c := &Client{URLs: []string{"http://127.0.0.1:1"}, CachePath: cache, Timeout: time.Second, Transfer: Helper(helper)}
			_, err := c.Find(context.Background(), mustHex(t, id), Debuginfo)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one with %q", err, tt.wantErr)
			}
			if got := tree(t, cache); len(got) != 0 {
				t.Errorf("left in the cache: %v", got)
			}
		})
	}
}
