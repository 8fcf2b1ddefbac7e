package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// exactFixture fires g(k, v) over a few keys on two threads, in batches
// with pauses between them, in which snapshots fall.
const exactFixture = `#include <pthread.h>
#include <unistd.h>

__attribute__((noinline)) void g(long k, long v) {
	__asm__ volatile("" ::: "memory");
}

static void *fire(void *p) {
	long t = (long)p;
	for (long b = 0; b < %[1]d; b++) {
		for (long i = 0; i < %[2]d; i++) {
			long n = (b * 2 + t) * %[2]d + i;
			g(n %% %[3]d, n * 7919 %% 200001 - 100000);
		}
		usleep(2000);
	}
	return 0;
}

int main(void) {
	pthread_t t;
	pthread_create(&t, 0, fire, (void *)1);
	fire(0);
	pthread_join(t, 0);
	return 0;
}
`

// TestAggExact checks the values of keys that persist across many
// snapshots, each taking the entries out of the kernel's maps while
// two threads aggregate into them: count, sum, min, max and avg
// against the values computed here; stddev and the quantizations
// against a tracing of the same firings taken in one snapshot.
func TestAggExact(t *testing.T) {
	needTracing(t)
	const batches, perBatch, keys = 40, 1000, 6
	bin := gcctest.Build(t, t.TempDir(), "fix", fmt.Sprintf(exactFixture, batches, perBatch, keys), "-pthread")
	prog := `pid$target:fix:g:entry {
	this->v = (long)arg1;
	@c[arg0] = count(); @s[arg0] = sum(this->v); @mn[arg0] = min(this->v); @mx[arg0] = max(this->v);
	@a[arg0] = avg(this->v); @sd[arg0] = stddev(this->v); @q[arg0] = quantize(this->v);
	@lq[arg0] = lquantize(this->v / 1000, -100, 100, 10); @llq[arg0] = llquantize(this->v + 100000, 10, 0, 6, 20);
}
END {
	printa("%d %@d\n", @c); printa("%d %@d\n", @s); printa("%d %@d\n", @mn); printa("%d %@d\n", @mx); printa("%d %@d\n", @a);
	printf("-\n");
	printa(@sd); printa(@q); printa(@lq); printa(@llq);
}`
	run := func(switchrate string) string {
		out, errs, st := runActive(t, []string{"-q", "-x", "aggsortkey", "-x", "switchrate=" + switchrate, "-c", bin, "-n", prog}, func() {})
		if st != 0 || errs != "" {
			t.Fatalf("switchrate=%s: status %d, stderr %q", switchrate, st, errs)
		}
		return out
	}
	before := loadedPrograms(t)
	many := run("1ms")
	one := run("1h")
	checkReleased(t, before)

	type stat struct{ n, sum, min, max int64 }
	want := make([]stat, keys)
	for th := range int64(2) {
		for b := range int64(batches) {
			for i := range int64(perBatch) {
				n := (b*2+th)*perBatch + i
				k, v := n%keys, n*7919%200001-100000
				s := &want[k]
				if s.n == 0 || v < s.min {
					s.min = v
				}
				if s.n == 0 || v > s.max {
					s.max = v
				}
				s.n++
				s.sum += v
			}
		}
	}
	var w strings.Builder
	for _, f := range []func(s stat) int64{
		func(s stat) int64 { return s.n },
		func(s stat) int64 { return s.sum },
		func(s stat) int64 { return s.min },
		func(s stat) int64 { return s.max },
		func(s stat) int64 { return s.sum / s.n },
	} {
		for k, s := range want {
			fmt.Fprintf(&w, "%d %d\n", k, f(s))
		}
	}
	got, rest, _ := strings.Cut(many, "-\n")
	if got = strings.ReplaceAll(got, "\n\n", "\n"); got != w.String() {
		t.Errorf("count, sum, min, max, avg:\n%s\nwant\n%s", got, w.String())
	}
	_, oneRest, _ := strings.Cut(one, "-\n")
	if rest != oneRest || rest == "" {
		t.Errorf("stddev and quantizations over many snapshots:\n%s\nin one:\n%s", rest, oneRest)
	}
}
