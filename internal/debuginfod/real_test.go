package debuginfod_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/debuginfod"
	"github.com/kdtrace/kdtrace/internal/debuginfod/debuginfodtest"
)

// TestRealServer fetches a program's debug file from elfutils'
// debuginfod: cold, then warm with the server stopped, and then a
// build-id not in the cache, which names the server and why it failed.
func TestRealServer(t *testing.T) {
	dir, served := t.TempDir(), t.TempDir()
	_, id := debuginfodtest.Fixture(t, dir, served)
	srv := debuginfodtest.Start(t, served, id)
	cache := filepath.Join(t.TempDir(), "cache")
	var verbose bytes.Buffer
	c := &debuginfod.Client{URLs: []string{srv.URL}, CachePath: cache, Verbose: &verbose}
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
	c = &debuginfod.Client{URLs: []string{srv.URL}, CachePath: cache, Verbose: &verbose}
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
