package attach

import (
	"testing"

	"github.com/cilium/ebpf"
	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/gcctest"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// threadedProgram calls work n times in a new thread for each line n
// it reads.
const threadedProgram = `#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

volatile long sink;
static long n;

__attribute__((noinline)) long work(long a) {
	sink += a;
	return sink;
}

static void *run(void *arg) {
	for (long i = 0; i < n; i++)
		work(i);
	return 0;
}

int main(void) {
	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		pthread_t th;
		n = atol(line);
		pthread_create(&th, 0, run, 0);
		pthread_join(th, 0);
		printf("%ld\n", sink);
		fflush(stdout);
	}
	return 0;
}
`

// TestUprobesProcess checks that a site with a PID fires in every
// thread of that process, however the thread was made, and in no other
// process running the same file, through both link kinds.
func TestUprobesProcess(t *testing.T) {
	needBPF(t)
	path := gcctest.Build(t, t.TempDir(), "threaded", threadedProgram, "-pthread")
	work, _ := function(t, path, "work")
	bothLinkKinds(t, func(t *testing.T, multi bool) {
		traced, other := startFixture(t, path), startFixture(t, path)
		c := loadCounter(t, ebpf.Kprobe, UprobeAttachType(), 1, byCookie...)
		site := &probe.UserSite{PID: traced.pid(), Path: path, Addr: work.Value, Size: work.Size}
		a, err := Uprobes(c.prog, []*probe.UserSite{site}, []uint64{0})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		traced.run(t, 7)
		other.run(t, 5)
		traced.run(t, 2)
		if diff := cmp.Diff([]uint64{9}, c.read(t)); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}
	})
}
