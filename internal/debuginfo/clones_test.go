package debuginfo

import (
	"debug/elf"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/gcctest"
)

func TestIsClone(t *testing.T) {
	tests := []struct {
		suffix string
		want   bool
	}{
		{".constprop.0", true},
		{".isra.0", true},
		{".constprop.0.isra.0", true},
		{".constprop.12.isra.3", true},
		{".specialized.1", true},
		{"", false},
		{".part.0", false},
		{".cold", false},
		{".part.0.cold", false},
		{".constprop.0.cold", false},
		{".isra.0.part.0", false},
		{".constprop", false},
		{".constprop.", false},
		{".constprop.x", false},
		{"constprop.0", false},
		{".localalias", false},
		{"_helper", false},
	}
	for _, tt := range tests {
		if got := isClone(tt.suffix); got != tt.want {
			t.Errorf("isClone(%q) = %v, want %v", tt.suffix, got, tt.want)
		}
	}
}

// cloneSrc makes gcc clone g (a pointer it reads one field of, an
// argument it never reads, the same constant from most callers) and
// split p (a fast path and a large slow one) at -O2.
const cloneSrc = `
struct pt { long a, b, c[8]; };
static volatile long sink;
__attribute__((noinline)) static long g(struct pt *q, long k, long unused)
{
	long s = 0;
	for (long i = 0; i < q->a; i++)
		s += (i * k) ^ (s >> 3);
	return s;
}
__attribute__((noinline)) long c1(long x) { struct pt q = {x, 2}; return g(&q, 3, x); }
__attribute__((noinline)) long c2(long x) { struct pt q = {x, 4}; return g(&q, 3, 1); }
__attribute__((noinline)) long c3(long x) { struct pt q = {x, 4}; return g(&q, x, 1); }
__attribute__((noinline, cold)) long rare(long x) { sink -= x; return -x; }
static long p(long x)
{
	if (x & 1)
		return 0;
	long s = 0;
	for (long i = 0; i < x; i++) {
		s += (i * x) ^ (s >> 3);
		if (s % 13 == 0)
			sink += s;
		else
			sink -= i;
		s += sink & x;
		if (s % 7 == 0)
			s = rare(s);
	}
	return s;
}
__attribute__((noinline)) long d1(long x) { return p(x) + 1; }
__attribute__((noinline)) long d2(long x) { return p(x + 3) * 2; }
int main(int argc, char **argv) { return c1(argc) + c2(argc) + c3(argc) + d1(argc) + d2(argc); }
`

// TestClones checks Set.Clones against the program's symbol table: the
// clones gcc made of g, and none of p, whose split part is no clone.
func TestClones(t *testing.T) {
	dir := t.TempDir()
	bin := gcctest.Build(t, dir, "clones", cloneSrc, "-O2", "-g")
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	part := false
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) != elf.STT_FUNC {
			continue
		}
		if rest, ok := strings.CutPrefix(s.Name, "g."); ok && isClone("."+rest) {
			want = append(want, s.Name)
		}
		part = part || strings.HasPrefix(s.Name, "p.part.")
	}
	if len(want) == 0 || !part {
		t.Skipf("this gcc made no clone of g (%v) or no part of p (%v)", want, part)
	}
	img, err := OpenImage(bin, Options{CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	set := NewSet(img)
	defer set.Close()
	var got []string
	for _, s := range set.Clones("g") {
		got = append(got, s.Name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Clones(g) (-want +got):\n%s", diff)
	}
	if c := set.Clones("p"); len(c) != 0 {
		t.Errorf("Clones(p) = %v, want none: p.part.N is no clone", c)
	}
}
