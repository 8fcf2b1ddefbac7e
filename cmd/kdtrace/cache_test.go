package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCacheOtherUser runs kdtrace as root with its cache in the home of
// another user (nobody), who has planted links there as sudo -E allows:
// to a file of root's from the names kdtrace writes, or from .cache to a
// directory of root's. Nothing of root's changes, kdtrace warns once
// that it goes without its cache, and its output is what it is with a
// cache of its own.
func TestCacheOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to act as two users")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv, to act as another user")
	}
	const nobody = 65534
	demo := filepath.Join("..", "..", "examples", "kinst", "demo")
	args := []string{"kdtrace", "--kernel", demo, "-e", "-d", "-s", filepath.Join("..", "..", "examples", "kinst", "demo.d")}
	const buildID = "69d9a71761894b585adbf7ba2654e65b2dd766f3" // demo's

	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	// With a cache of its own, kdtrace says only what it says of the
	// demo's code (a doubt about one inline call).
	var want, said bytes.Buffer
	if st := run(args, &want, &said); st != 0 || strings.Contains(said.String(), "cache") {
		t.Fatalf("with a cache of its own: status %d, %s", st, said.Bytes())
	}

	tests := []struct {
		name string
		// plant is the shell command nobody runs in its home, where $V
		// is root's file, $R a directory of root's holding kdtrace/trim.txt.
		plant string
		xdg   bool // XDG_CACHE_HOME is nobody's home, not HOME
	}{
		{"links to root's file", "mkdir -p .cache/kdtrace && cd .cache/kdtrace && for f in trim.txt " + buildID + ".idx " + buildID + ".types; do ln -s $V $f; done", false},
		{"link from .cache", "ln -s $R .cache", false},
		{"XDG_CACHE_HOME", "mkdir kdtrace && ln -s $V kdtrace/trim.txt", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			// nobody must reach its home and root's files through base.
			for _, d := range []string{filepath.Dir(base), base} {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			home := filepath.Join(base, "home")
			if err := os.Mkdir(home, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(home, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			// root's: a file, and a directory where a cache once was.
			old := time.Now().Add(-72 * time.Hour).Truncate(time.Second)
			victims := []string{filepath.Join(base, "victim"), filepath.Join(base, "root", "kdtrace", "trim.txt")}
			if err := os.MkdirAll(filepath.Dir(victims[1]), 0o700); err != nil {
				t.Fatal(err)
			}
			for _, v := range victims {
				if err := os.WriteFile(v, []byte("secret\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				os.Chtimes(v, old, old)
			}

			cmd := exec.Command(setpriv, "--reuid="+strconv.Itoa(nobody), "--regid="+strconv.Itoa(nobody), "--clear-groups", "sh", "-ec", tt.plant)
			cmd.Dir = home
			cmd.Env = []string{"PATH=/usr/bin:/bin", "V=" + victims[0], "R=" + filepath.Join(base, "root")}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("planting as nobody: %v\n%s", err, out)
			}

			cache := filepath.Join(home, ".cache", "kdtrace")
			if tt.xdg {
				t.Setenv("HOME", t.TempDir())
				t.Setenv("XDG_CACHE_HOME", home)
				cache = filepath.Join(home, "kdtrace")
			} else {
				t.Setenv("HOME", home)
				t.Setenv("XDG_CACHE_HOME", "")
			}
			for i := range 2 {
				var stdout, stderr bytes.Buffer
				st := run(args, &stdout, &stderr)
				if st != 0 {
					t.Fatalf("status %d: %s", st, stderr.Bytes())
				}
				if diff := cmp.Diff(want.String(), stdout.String()); diff != "" {
					t.Errorf("output (-with a cache +without):\n%s", diff)
				}
				// Once a run: the second, in this process, is told
				// nothing anew.
				wantErr := "kdtrace: warning: not using the cache " + cache + ": " + home + ": owned by another user (uid 65534)\n" + said.String()
				if i == 1 {
					wantErr = said.String()
				}
				if stderr.String() != wantErr {
					t.Errorf("run %d: stderr %q, want %q", i+1, stderr.String(), wantErr)
				}
			}

			for _, v := range victims {
				b, err := os.ReadFile(v)
				if err != nil {
					t.Fatal(err)
				}
				st, err := os.Stat(v)
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != "secret\n" || !st.ModTime().Equal(old) || st.Mode().Perm() != 0o600 {
					t.Errorf("%s changed: %q, mode %v, modified %v", v, b, st.Mode(), st.ModTime())
				}
			}
			// Nothing of root's appears in nobody's home, nor beside
			// root's trim.txt.
			filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					t.Error(err)
					return nil
				}
				if info, err := d.Info(); err == nil && info.Sys().(*syscall.Stat_t).Uid != nobody {
					t.Errorf("%s: written by root", p)
				}
				return nil
			})
			if ents, _ := os.ReadDir(filepath.Dir(victims[1])); len(ents) != 1 {
				t.Errorf("%s holds %d files, want 1", filepath.Dir(victims[1]), len(ents))
			}
		})
	}
}

// TestCacheRefusedTypes: a program that only names a --kernel image's
// types, indexed without kinst, is told too why the cache is not used.
func TestCacheRefusedTypes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to give a directory to another user")
	}
	home := filepath.Join(t.TempDir(), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	demo := filepath.Join("..", "..", "examples", "kinst", "demo")
	var stdout, stderr bytes.Buffer
	st := run([]string{"kdtrace", "--kernel", demo, "-e", "-n", "BEGIN { trace(sizeof(struct req)); }"}, &stdout, &stderr)
	want := "kdtrace: warning: not using the cache " + filepath.Join(home, ".cache", "kdtrace") + ": " + home + ": owned by another user (uid 65534)\n"
	if st != 0 || stderr.String() != want {
		t.Errorf("status %d, stderr %q; want 0 and %q", st, stderr.String(), want)
	}
	if ents, err := os.ReadDir(home); err != nil || len(ents) != 0 {
		t.Errorf("%s holds %v (%v), want nothing", home, ents, err)
	}
}
