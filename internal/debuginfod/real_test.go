package debuginfod_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/debuginfod"
	"github.com/kdtrace/kdtrace/internal/debuginfod/debuginfodtest"
	"github.com/kdtrace/kdtrace/internal/kdtracebin"
)

// TestRealServer fetches a program's debug file from elfutils'
// debuginfod by kdtrace-debuginfod: cold, then warm with the server
// stopped, and then a build-id not in the cache, which names the server
// and why it failed.
func TestRealServer(t *testing.T) {
	dir, served := t.TempDir(), t.TempDir()
	_, id := debuginfodtest.Fixture(t, dir, served)
	srv := debuginfodtest.Start(t, served, id)
	helper := debuginfod.Helper(kdtracebin.BuildHelper(t, t.TempDir()))
	cache := filepath.Join(t.TempDir(), "cache")
	var verbose bytes.Buffer
	c := &debuginfod.Client{URLs: []string{srv.URL}, CachePath: cache, Verbose: &verbose, Transfer: helper}
	b, _ := hex.DecodeString(id)

	path, err := c.Find(context.Background(), b, debuginfod.Debuginfo)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(served, "loop.debug"))
	if got, _ := os.ReadFile(path); !bytes.Equal(got, want) {
		t.Errorf("%s (%d bytes) is not the served loop.debug (%d bytes)", path, len(got), len(want))
	}
	if !strings.Contains(verbose.String(), "got file from server") {
		t.Errorf("cold lookup: verbose output %q says no download", verbose.String())
	}

	srv.Stop()
	verbose.Reset()
	c = &debuginfod.Client{URLs: []string{srv.URL}, CachePath: cache, Verbose: &verbose, Transfer: helper}
	if warm, err := c.Find(context.Background(), b, debuginfod.Debuginfo); err != nil || warm != path {
		t.Errorf("warm lookup, server stopped: %q, %v; want %s", warm, err, path)
	}
	if !strings.Contains(verbose.String(), "found "+path+" in the cache") {
		t.Errorf("warm lookup: verbose output %q", verbose.String())
	}

	other := append([]byte(nil), b...)
	other[0] ^= 0xff
	_, err = c.Find(context.Background(), other, debuginfod.Debuginfo)
	var e *debuginfod.Error
	if !errors.As(err, &e) || e.NotFound() || !strings.Contains(err.Error(), srv.URL+": ") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("server down: %v; want a failure naming %s and the refused connection", err, srv.URL)
	}
}

// TestSharedCache: a file elfutils' debuginfod-find fetched is found by
// our client in the cache they share, the server stopped, and one our
// client fetched (by kdtrace-debuginfod) is found by debuginfod-find.
func TestSharedCache(t *testing.T) {
	find, err := exec.LookPath("debuginfod-find")
	if err != nil {
		t.Skipf("no debuginfod-find (Debian package debuginfod): %v", err)
	}
	served := t.TempDir()
	_, id1 := debuginfodtest.Fixture(t, t.TempDir(), served)
	os.Rename(filepath.Join(served, "loop.debug"), filepath.Join(served, "one.debug"))
	_, id2 := debuginfodtest.Fixture(t, t.TempDir(), served)
	srv := debuginfodtest.Start(t, served, id1, id2)
	cache := filepath.Join(t.TempDir(), "cache")
	elfutils := func(id string) (string, error) {
		cmd := exec.Command(find, "debuginfo", id)
		cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS="+srv.URL, "DEBUGINFOD_CACHE_PATH="+cache)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	got1, err := elfutils(id1)
	if err != nil {
		t.Fatalf("debuginfod-find: %v", err)
	}
	c := &debuginfod.Client{URLs: []string{srv.URL}, CachePath: cache, Transfer: debuginfod.Helper(kdtracebin.BuildHelper(t, t.TempDir()))}
	b2, _ := hex.DecodeString(id2)
	got2, err := c.Find(context.Background(), b2, debuginfod.Debuginfo)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	b1, _ := hex.DecodeString(id1)
	if p, err := c.Find(context.Background(), b1, debuginfod.Debuginfo); err != nil || p != got1 {
		t.Errorf("debuginfod-find's file: %q, %v; want %s", p, err, got1)
	}
	if p, err := elfutils(id2); err != nil || p != got2 {
		t.Errorf("debuginfod-find of our file, server stopped: %q, %v; want %s", p, err, got2)
	}
}
