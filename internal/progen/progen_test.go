package progen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGenerateDeterministic checks that a seed makes the same program
// every time, and that other seeds make others.
func TestGenerateDeterministic(t *testing.T) {
	seen := map[string]uint64{}
	for seed := range uint64(50) {
		p := Generate(seed)
		if diff := cmp.Diff(p, Generate(seed)); diff != "" {
			t.Fatalf("seed %d made two programs (-first +second):\n%s", seed, diff)
		}
		if other, ok := seen[p.Source]; ok {
			t.Errorf("seeds %d and %d made the same program", other, seed)
		}
		seen[p.Source] = seed
	}
}

// TestGenerateShapes checks that the programs of a few seeds have, all
// together, every kind of inline function the package documents.
func TestGenerateShapes(t *testing.T) {
	var always, plain, pointer, nested int
	for seed := range uint64(20) {
		p := Generate(seed)
		if n := len(p.Funcs); n < 3 || n > 6 {
			t.Errorf("seed %d: %d inline functions, want 3 to 6", seed, n)
		}
		for _, f := range p.Funcs {
			if f.Always {
				always++
			} else {
				plain++
			}
			if f.Pointer {
				pointer++
			}
			if len(f.Calls) > 0 {
				nested++
			}
		}
	}
	if always == 0 || plain == 0 || pointer == 0 || nested == 0 {
		t.Errorf("20 programs have %d always_inline, %d plain inline, %d pointer-called and %d nesting inline functions; want some of each", always, plain, pointer, nested)
	}
}

// TestGenerateBuildsAndRuns builds the programs of a few seeds with gcc
// and clang at -O1 to -O3, warnings as errors, runs them and checks
// that they print a count of every inline function, the same with every
// compiler and flag.
func TestGenerateBuildsAndRuns(t *testing.T) {
	var ccs []string
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := exec.LookPath(cc); err == nil {
			ccs = append(ccs, cc)
		}
	}
	if len(ccs) == 0 {
		t.Skip("no gcc or clang")
	}
	seeds := uint64(8)
	if testing.Short() {
		seeds = 3
	}
	dir := t.TempDir()
	for seed := range seeds {
		p := Generate(seed)
		src := filepath.Join(dir, "p"+strconv.FormatUint(seed, 10)+".c")
		if err := os.WriteFile(src, []byte(p.Source), 0o644); err != nil {
			t.Fatal(err)
		}
		var first map[string]uint64
		for _, cc := range ccs {
			for _, level := range []string{"-O1", "-O2", "-O3"} {
				exe := filepath.Join(dir, "p")
				if out, err := exec.Command(cc, level, "-Wall", "-Wextra", "-Werror", "-o", exe, src).CombinedOutput(); err != nil {
					t.Fatalf("seed %d: %s %s: %v\n%s", seed, cc, level, err, out)
				}
				out, err := exec.Command(exe, p.Args...).Output()
				if err != nil {
					t.Fatalf("seed %d, %s %s: %v", seed, cc, level, err)
				}
				counts, err := Counts(out)
				if err != nil {
					t.Fatalf("seed %d, %s %s: %v", seed, cc, level, err)
				}
				for _, f := range p.Funcs {
					if _, ok := counts[f.Name]; !ok {
						t.Errorf("seed %d, %s %s: no count of %s:\n%s", seed, cc, level, f.Name, out)
					}
				}
				if len(counts) != len(p.Funcs) {
					t.Errorf("seed %d, %s %s: %d counts for %d inline functions", seed, cc, level, len(counts), len(p.Funcs))
				}
				if first == nil {
					first = counts
				} else if diff := cmp.Diff(first, counts); diff != "" {
					t.Errorf("seed %d: %s %s counts differently (-first +this):\n%s", seed, cc, level, diff)
				}
			}
		}
	}
}

func TestCounts(t *testing.T) {
	for _, c := range []struct {
		name, out string
		want      map[string]uint64
		err       bool
	}{
		{"mixed", "acc 12\ncnt f0 3\nprobe entry f0 3\ncnt f1 0\n", map[string]uint64{"f0": 3, "f1": 0}, false},
		{"none", "acc 12\n", map[string]uint64{}, false},
		{"twice", "cnt f0 3\ncnt f0 4\n", nil, true},
		{"not a number", "cnt f0 x\n", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Counts([]byte(c.out))
			if (err != nil) != c.err {
				t.Fatalf("Counts(%q): error %v, want error %v", c.out, err, c.err)
			}
			if diff := cmp.Diff(c.want, got); !c.err && diff != "" {
				t.Errorf("Counts(%q) (-want +got):\n%s", c.out, diff)
			}
		})
	}
}
