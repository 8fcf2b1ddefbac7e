package debuginfo

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/debuginfod"
	"github.com/kdtrace/kdtrace/internal/debuginfod/debuginfodtest"
)

// TestOpenImageDebuginfod: a stripped program whose debug file is
// nowhere on the machine is indexed from the debug file debuginfod
// serves; with the server stopped and another cache, the
// *NotFoundError names the server and why it failed.
func TestOpenImageDebuginfod(t *testing.T) {
	dir, served := t.TempDir(), t.TempDir()
	prog, id := debuginfodtest.Fixture(t, dir, served)
	opts := Options{DebugRoot: t.TempDir(), NoCache: true}
	if _, err := OpenImage(prog, opts); err == nil {
		t.Fatal("the stripped fixture opened without debuginfod")
	}
	srv := debuginfodtest.Start(t, served, id)
	opts.Debuginfod = &debuginfod.Client{URLs: []string{srv.URL}, CachePath: filepath.Join(t.TempDir(), "cache"), Transfer: debuginfodtest.InProcess}
	img, err := OpenImage(prog, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if img.Source != sourceDebuginfod || !strings.HasPrefix(img.DebugPath, opts.Debuginfod.CachePath) {
		t.Errorf("debug file %s from %s, want the debuginfod cache's", img.DebugPath, img.Source)
	}
	set := NewSet(img)
	f, err := set.Lookup("inl")
	if err != nil || len(f.Copies) == 0 {
		t.Errorf("inl: %v, %d inline copies; want some", err, len(f.Copies))
	}

	srv.Stop()
	opts.Debuginfod = &debuginfod.Client{URLs: []string{srv.URL}, CachePath: filepath.Join(t.TempDir(), "cache"), Transfer: debuginfodtest.InProcess}
	_, err = OpenImage(prog, opts)
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Debuginfod == nil || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("server down: %v; want a *NotFoundError naming %s", err, srv.URL)
	}
}
