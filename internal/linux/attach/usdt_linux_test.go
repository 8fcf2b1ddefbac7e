package attach

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/google/go-cmp/cmp"
	"github.com/kdtrace/kdtrace/internal/probe"
)

// TestUSDT attaches at the two points of the fixture's USDT probe,
// found as the probe package finds them, and checks the firings and the
// semaphore: counted up while attached, back to 0 after.
func TestUSDT(t *testing.T) {
	needBPF(t)
	if !fileExists("/usr/include/x86_64-linux-gnu/sys/sdt.h") && !fileExists("/usr/include/sys/sdt.h") {
		t.Skip("no <sys/sdt.h> (Debian's systemtap-sdt-dev)")
	}
	fx := startFixture(t, buildFixture(t, true))
	pid := strconv.Itoa(fx.pid())
	cat, err := probe.Live(probe.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := cat.Match(probe.Desc{Provider: "fixture" + pid, Name: "tick"})
	if err != nil || len(ps) != 1 {
		t.Fatalf("Match(fixture%s:::tick) = %v, %v", pid, ps, err)
	}
	site := ps[0].Detail.(*probe.USDTSite)
	if len(site.Points) != 2 || site.Points[0].Semaphore == 0 {
		t.Fatalf("the probe's points are %+v, want two with a semaphore", site.Points)
	}
	sem := func() uint16 { return semaphore(t, fx.pid(), site.Points[0].Semaphore) }
	if s := sem(); s != 0 {
		t.Fatalf("semaphore %d before attaching", s)
	}
	bothLinkKinds(t, func(t *testing.T, multi bool) {
		c := loadCounter(t, ebpf.Kprobe, UprobeAttachType(), 2, byCookie...)
		a, err := USDT(c.prog, []*probe.USDTSite{site}, []uint64{1})
		if err != nil {
			t.Fatal(err)
		}
		// The kernel counts the semaphore up once per point.
		if s := sem(); s != 2 {
			t.Errorf("semaphore %d while attached, want 2", s)
		}
		if out := fx.run(t, 5); !strings.HasSuffix(out, " 2") {
			t.Errorf("the fixture saw its semaphore as %q, want 2", out)
		}
		if diff := cmp.Diff([]uint64{0, 5}, c.read(t)); diff != "" {
			t.Errorf("counts (-want +got):\n%s", diff)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if s := sem(); s != 0 {
			t.Errorf("semaphore %d after Close, want 0", s)
		}
		fx.run(t, 5)
		if diff := cmp.Diff([]uint64{0, 5}, c.read(t)); diff != "" {
			t.Errorf("counts after Close (-want +got):\n%s", diff)
		}
		if n := linksOf(t, c.id(t)); n != 0 {
			t.Errorf("%d links hold the program after Close", n)
		}
	})
}
