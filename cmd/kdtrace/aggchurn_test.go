package main

import (
	"bufio"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// churnFixture fires f(k) for ROUNDS rounds of KEYS new keys k, 1 + k%3
// times each, on two threads, then round(r); it starts each round on a
// SIGUSR1.
const churnFixture = `#include <pthread.h>
#include <signal.h>

static volatile sig_atomic_t started;
static void on(int s) { started++; }

__attribute__((noinline)) long f(long k) {
	__asm__ volatile("" ::: "memory");
	return k;
}

__attribute__((noinline)) void round(long r) {
	__asm__ volatile("" ::: "memory");
}

struct span { long from, to; };

static void *fire(void *p) {
	struct span *s = p;
	for (long k = s->from; k < s->to; k++)
		for (long j = 0; j <= k %% 3; j++)
			f(k);
	return 0;
}

int main(void) {
	sigset_t usr1, old;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	signal(SIGUSR1, on);
	for (long r = 0; r < %d; r++) {
		while (started <= r)
			sigsuspend(&old);
		long base = r * %d, half = %d / 2;
		struct span a = {base, base + half}, b = {base + half, base + %d};
		pthread_t t;
		pthread_create(&t, 0, fire, &a);
		fire(&b);
		pthread_join(t, 0);
		round(r);
	}
	for (;;)
		sigsuspend(&old);
}
`

// TestAggChurn aggregates 100 rounds of 5,000 new keys each at the
// default aggsize, printing and truncating the aggregation after each
// round, as a long-running tracing over churning keys does: every key
// prints with its exact count, and nothing is dropped, as the kernel's
// maps hold the keys of a snapshot's interval, not every key seen.
func TestAggChurn(t *testing.T) {
	needTracing(t)
	const rounds, keys = 100, 5000
	bin := gcctest.Build(t, t.TempDir(), "fix", fmt.Sprintf(churnFixture, rounds, keys, keys, keys), "-pthread")
	fix, pid := startFixture(t, bin)
	// The next round starts once the consumer has printed this one's.
	prog := fmt.Sprintf(`
BEGIN { printf("go\n"); }
pid$target:fix:f:entry { @[arg0] = count(); }
pid$target:fix:round:entry { printa("%%d %%@d\n", @); trunc(@); }
pid$target:fix:round:entry /arg0 < %d/ { system("kill -USR1 %%d", pid); }
pid$target:fix:round:entry /arg0 == %d/ { exit(0); }
END { printa("%%d %%@d\n", @); }`, rounds-1, rounds-1)
	before := loadedPrograms(t)
	out, errs, st := runActive(t, []string{"-q", "-w", "-x", "switchrate=10ms", "-p", fmt.Sprint(pid), "-n", prog}, func() {
		fix.Process.Signal(syscall.SIGUSR1)
	})
	if st != 0 || errs != "" {
		t.Fatalf("status %d, stderr %q", st, errs)
	}
	// A key's firings may straddle a snapshot that a round's printa()
	// follows: its count then prints in two rows.
	counts := map[int]int{}
	rows := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var k, n int
		if l := sc.Text(); l == "go" || l == "" {
			continue
		} else if _, err := fmt.Sscanf(l, "%d %d", &k, &n); err != nil {
			t.Fatalf("row %q: %v", l, err)
		}
		counts[k] += n
		rows++
	}
	bad := 0
	for k := range rounds * keys {
		if counts[k] != 1+k%3 {
			if bad++; bad <= 10 {
				t.Errorf("key %d: count %d, want %d", k, counts[k], 1+k%3)
			}
		}
	}
	if bad > 0 || len(counts) != rounds*keys {
		t.Errorf("%d keys of %d wrong, %d keys printed in %d rows", bad, rounds*keys, len(counts), rows)
	}
	checkReleased(t, before)
}
