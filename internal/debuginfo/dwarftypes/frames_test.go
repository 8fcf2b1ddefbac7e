package dwarftypes

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kdtrace/kdtrace/internal/debuginfo"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
	"github.com/kdtrace/kdtrace/internal/debuginfo/unwind"
	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// TestFramesSeparateDebug reads a program whose DWARF was moved to a
// separate file: the frames of the image with its debug file, and
// Types.Frames, find the C functions' .eh_frame in the program and the
// assembly's .debug_frame in the debug file, where the debug file alone
// has no .eh_frame.
func TestFramesSeparateDebug(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the fixture's assembly is amd64's")
	}
	gcctest.Need(t, "gcc", "objcopy")
	src, err := filepath.Abs("../unwind/testdata")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gcctest.Run(t, dir, "gcc", "-O2", "-g", "-o", "prog", filepath.Join(src, "cfi.c"), filepath.Join(src, "cfi.s"))
	gcctest.Run(t, dir, "objcopy", "--only-keep-debug", "prog", "prog.debug")
	gcctest.Run(t, dir, "objcopy", "--strip-debug", "--add-gnu-debuglink=prog.debug", "prog")
	img, err := debuginfo.OpenImage(filepath.Join(dir, "prog"), debuginfo.Options{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if img.Source != debuginfo.SourceDebugLink {
		t.Fatalf("debug file found by %s", img.Source)
	}
	ef, err := elffile.Open(img.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer ef.Close()
	funcs, _, err := ef.Symbols(nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]uint64{}
	for _, s := range funcs {
		addr[s.Name] = s.Value
	}
	all, err := unwind.OpenImage(img.Path, img.DebugPath)
	if err != nil {
		t.Fatal(err)
	}
	ty, err := Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer ty.Close()
	viaTypes, err := ty.Frames()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := ty.Frames(); again != viaTypes {
		t.Error("Types.Frames read the tables again")
	}
	dbg, err := unwind.Open(img.DebugPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fn, source string
		inDebug    bool
	}{
		{"many_saved", ".eh_frame", false},
		{"main", ".eh_frame", false},
		{"cfi_forms", ".debug_frame", true},
	} {
		for _, fr := range []*unwind.Frames{all, viaTypes} {
			r, err := fr.Row(addr[tc.fn])
			if err != nil {
				t.Errorf("%s: %v", tc.fn, err)
			} else if r.CFA.String() != "r7+8" || r.Source != tc.source {
				t.Errorf("%s: CFA %v from %s, want r7+8 from %s", tc.fn, r.CFA, r.Source, tc.source)
			}
		}
		if cfa, err := ty.CFA(addr[tc.fn]); err != nil || cfa.String() != "r7+8" {
			t.Errorf("%s: Types.CFA %v, %v; want r7+8", tc.fn, cfa, err)
		}
		_, err = dbg.Row(addr[tc.fn])
		if tc.inDebug && err != nil || !tc.inDebug && !errors.Is(err, unwind.ErrNoFrame) {
			t.Errorf("%s in the debug file: %v", tc.fn, err)
		}
	}
}
