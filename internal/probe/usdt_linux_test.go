//go:build linux

package probe

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/gcctest"
)

// usdtProgram marks probes with <sys/sdt.h>: two points of one probe in
// work and a probe whose C name has "__" in main, each with a
// semaphore.
const usdtProgram = `#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <unistd.h>

unsigned short test_prov_place_semaphore __attribute__((section(".probes")));
unsigned short bunyan_fake_log__debug_semaphore __attribute__((section(".probes")));

__attribute__((noinline)) int work(int a, int b) {
	DTRACE_PROBE2(test_prov, place, a, b);
	if (a > b)
		DTRACE_PROBE2(test_prov, place, b, a);
	return a + b;
}

int main(int argc, char **argv) {
	for (;;) {
		if (bunyan_fake_log__debug_semaphore)
			STAP_PROBE1(bunyan_fake, log__debug, argv[0]);
		work(argc, 4);
		pause();
	}
}
`

// startUSDT builds src, a program marked with <sys/sdt.h>, as name and
// runs it until the test ends, skipping the test without the header. It
// returns the program's path and its pid once libc is mapped.
func startUSDT(t *testing.T, name, src string) (path, pid string) {
	t.Helper()
	if _, err := os.Stat("/usr/include/x86_64-linux-gnu/sys/sdt.h"); err != nil {
		if _, err := os.Stat("/usr/include/sys/sdt.h"); err != nil {
			t.Skip("no <sys/sdt.h> (Debian's systemtap-sdt-dev)")
		}
	}
	path = gcctest.Build(t, t.TempDir(), name, src)
	cmd := exec.Command(path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	pid = strconv.Itoa(cmd.Process.Pid)
	for range 200 {
		if maps, _ := os.ReadFile("/proc/" + pid + "/maps"); strings.Contains(string(maps), "libc") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return path, pid
}

func TestUSDT(t *testing.T) {
	path, pid := startUSDT(t, "marked", usdtProgram)
	exe := filepath.Base(path)

	tests := []struct {
		desc Desc
		want []string
	}{
		{Desc{"test_prov" + pid, "", "", ""}, []string{"test_prov" + pid + ":" + exe + ":work:place"}},
		{Desc{"bunyan*" + pid, "", "", "log-*"}, []string{"bunyan_fake" + pid + ":" + exe + ":main:log-debug"}},
		// Not "*"+pid, which also names the pid provider.
		{Desc{"*_*" + pid, exe, "", ""}, []string{
			"bunyan_fake" + pid + ":" + exe + ":main:log-debug",
			"test_prov" + pid + ":" + exe + ":work:place",
		}},
		{Desc{"test_prov" + pid, "", "main", ""}, nil},
		{Desc{"other_prov" + pid, "", "", ""}, nil},
	}
	for _, tt := range tests {
		c, err := Live(Config{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Match(tt.desc)
		if err != nil {
			t.Errorf("Match(%v): %v", tt.desc, err)
			continue
		}
		if diff := cmp.Diff(tt.want, names(got)); diff != "" {
			t.Errorf("Match(%v) (-want +got):\n%s", tt.desc, diff)
		}
	}

	// The points are where readelf -n says the notes put them.
	c, _ := Live(Config{})
	ps, err := c.Match(Desc{"test_prov" + pid, "", "", "place"})
	if err != nil || len(ps) != 1 {
		t.Fatalf("Match(test_prov:::place) = %v, %v", ps, err)
	}
	site, ok := ps[0].Detail.(*USDTSite)
	if !ok || strconv.Itoa(site.PID) != pid || site.Path != path {
		t.Fatalf("Detail = %#v", ps[0].Detail)
	}
	var got []string
	for _, p := range site.Points {
		got = append(got, strconv.FormatUint(p.Addr, 16)+" "+strconv.FormatUint(p.Semaphore, 16)+" "+p.Args)
	}
	if diff := cmp.Diff(readelfNotes(t, path, "place"), got); diff != "" {
		t.Errorf("points (-readelf +got):\n%s", diff)
	}
}

// readelfNotes returns the points of the probe called name that
// readelf -n lists in file: "location semaphore arguments", in hex.
func readelfNotes(t *testing.T, file, name string) []string {
	out, err := exec.Command("readelf", "-n", file).Output()
	if err != nil {
		t.Skipf("readelf: %v", err)
	}
	// Provider: test_prov
	// Name: place
	// Location: 0x..., Base: 0x..., Semaphore: 0x...
	// Arguments: -4@%edi -4@%esi
	re := regexp.MustCompile(`Name: (\S+)\s+Location: 0x([0-9a-f]+), Base: 0x[0-9a-f]+, Semaphore: 0x([0-9a-f]+)\s+Arguments: ([^\n]*)`)
	var pts []string
	for _, m := range re.FindAllStringSubmatch(string(out), -1) {
		if m[1] == name {
			loc, _ := strconv.ParseUint(m[2], 16, 64)
			sem, _ := strconv.ParseUint(m[3], 16, 64)
			pts = append(pts, strconv.FormatUint(loc, 16)+" "+strconv.FormatUint(sem, 16)+" "+strings.TrimSpace(m[4]))
		}
	}
	if len(pts) == 0 {
		t.Fatalf("readelf -n lists no %s in %s:\n%s", name, file, out)
	}
	return pts
}

// usdtTypedProgram has a probe whose notes type its argument
// differently in two functions, and one that types it alike in two.
const usdtTypedProgram = `#include <sys/sdt.h>
#include <unistd.h>

__attribute__((noinline)) void narrow(int a) { DTRACE_PROBE1(pd_prov, hit, a); }
__attribute__((noinline)) void wide(unsigned long b) { DTRACE_PROBE1(pd_prov, hit, b); }
__attribute__((noinline)) void same1(int a) { DTRACE_PROBE1(pd_prov, twice, a); }
__attribute__((noinline)) void same2(int a) { DTRACE_PROBE1(pd_prov, twice, a + 1); }

int main(int argc, char **argv) {
	for (;;) {
		narrow(argc);
		wide(argc);
		same1(argc);
		same2(argc);
		pause();
	}
}
`

// TestUSDTInfoDisagree checks that a description matching USDT probes
// whose notes type their arguments differently has no argument types
// (dtrace's EDT_UNSTABLE, for D_ARGS_MULTI), while each probe alone, and
// probes typed alike, have.
func TestUSDTInfoDisagree(t *testing.T) {
	_, pid := startUSDT(t, "typed", usdtTypedProgram)
	prov := "pd_prov" + pid
	tests := []struct {
		desc     Desc
		unstable bool
		args     []string
	}{
		{Desc{prov, "", "", "hit"}, true, nil},
		{Desc{prov, "", "narrow", "hit"}, false, []string{"int32_t"}},
		{Desc{prov, "", "wide", "hit"}, false, []string{"uint64_t"}},
		{Desc{prov, "", "", "twice"}, false, []string{"int32_t"}},
	}
	c, err := Live(Config{})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(pid)
	if err := c.Grab(n); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		info, err := c.Info(tt.desc)
		if err != nil {
			t.Errorf("Info(%v): %v", tt.desc, err)
			continue
		}
		if got := typeStrings(info.Args); info.Matches == 0 || info.Unstable != tt.unstable || !cmp.Equal(got, tt.args) {
			t.Errorf("Info(%v) = %d matches, unstable %v, args %q; want unstable %v, args %q",
				tt.desc, info.Matches, info.Unstable, got, tt.unstable, tt.args)
		}
	}
}
