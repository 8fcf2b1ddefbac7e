package probe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCPC(t *testing.T) {
	tests := []struct {
		name string
		want CPC
		ok   bool
	}{
		{"cpu_clock-all-10000", CPC{Event: "cpu_clock", Type: PerfTypeSoftware, Config: 0, Count: 10000, User: true, Kernel: true}, true},
		{"perf_count_sw_cpu_clock-all-1000000000", CPC{Event: "perf_count_sw_cpu_clock", Type: PerfTypeSoftware, Count: 1000000000, User: true, Kernel: true}, true},
		{"page-faults-user-1", CPC{Event: "page-faults", Type: PerfTypeSoftware, Config: 2, Count: 1, User: true}, true},
		{"PAGE_FAULTS-kernel-5", CPC{Event: "PAGE_FAULTS", Type: PerfTypeSoftware, Config: 2, Count: 5, Kernel: true}, true},
		{"cycles-user-100000", CPC{Event: "cycles", Type: PerfTypeHardware, Config: 0, Count: 100000, User: true}, true},
		{"branches-all-7000", CPC{Event: "branches", Type: PerfTypeHardware, Config: 4, Count: 7000, User: true, Kernel: true}, true},
		{"PAPI_tot_ins-all-10000", CPC{Event: "PAPI_tot_ins", Type: PerfTypeHardware, Config: 1, Count: 10000, User: true, Kernel: true}, true},
		{"PAPI_tot_ins-all-5000", CPC{Event: "PAPI_tot_ins", Type: PerfTypeHardware, Config: 1, Count: 5000, User: true, Kernel: true}, true},
		// Under illumos's dcpc-min-overflow, for a hardware event.
		{"PAPI_tot_ins-all-4999", CPC{}, false},
		{"PAPI_tot_ins-all-100", CPC{}, false},
		{"PAPI_cpc_bad-all-10000", CPC{}, false},
		{"PAPI_tot_ins-all-10000bonehead", CPC{}, false},
		{"cpu_clock-all-0", CPC{}, false},
		{"cpu_clock-all-", CPC{}, false},
		{"cpu_clock-all-10k", CPC{}, false},
		{"cpu_clock-all-+5", CPC{}, false},
		{"cpu_clock-all-99999999999999999999", CPC{}, false},
		{"cpu_clock-some-10", CPC{}, false},
		{"cpu_clock-10", CPC{}, false},
		{"nonexistentevent-all-10000", CPC{}, false},
		// illumos's attributes between mode and count.
		{"cpu_clock-all-0x1-10000", CPC{}, false},
		{"profile-97", CPC{}, false},
		{"", CPC{}, false},
	}
	for _, tt := range tests {
		got, ok := parseCPC(tt.name)
		if ok != tt.ok || ok && !cmp.Equal(got, tt.want) {
			t.Errorf("parseCPC(%q) = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// TestCPCProvider checks that the provider lists a probe of each event
// the machine has, and makes others of the names a description gives.
func TestCPCProvider(t *testing.T) {
	has := func(typ uint32, config uint64) bool { return typ == PerfTypeSoftware && config <= 2 }
	c := New(newCPC(has))
	names := func(d Desc) []string {
		var ns []string
		if err := c.Walk(d, func(p *Probe) bool { ns = append(ns, p.Name); return true }); err != nil {
			t.Fatal(err)
		}
		return ns
	}
	listed := []string{"perf_count_sw_cpu_clock-all-1000000000", "perf_count_sw_task_clock-all-1000000000", "perf_count_sw_page_faults-all-1000000000"}
	if diff := cmp.Diff(listed, names(Desc{Provider: "cpc"})); diff != "" {
		t.Errorf("cpc::: (-want +got):\n%s", diff)
	}
	// An event the machine lacks makes a probe when named, whose
	// enabling says why it cannot fire.
	if diff := cmp.Diff([]string{"cycles-kernel-5000"}, names(Desc{Provider: "cpc", Name: "cycles-kernel-5000"})); diff != "" {
		t.Errorf("cpc:::cycles-kernel-5000 (-want +got):\n%s", diff)
	}
	if got := names(Desc{Provider: "cpc", Name: "bogus-all-5"}); got != nil {
		t.Errorf("cpc:::bogus-all-5 matches %v", got)
	}
	if diff := cmp.Diff(append(listed, "cycles-kernel-5000"), names(Desc{Provider: "cpc"})); diff != "" {
		t.Errorf("cpc::: after cycles-kernel-5000 (-want +got):\n%s", diff)
	}
}

// TestCPCListOnDemand checks that a description naming a probe the
// provider could not list (BEGIN) does not ask the machine for its
// events, and that the listing is still whole when one could.
func TestCPCListOnDemand(t *testing.T) {
	asked := 0
	has := func(typ uint32, config uint64) bool { asked++; return typ == PerfTypeSoftware && config <= 2 }
	c := New(newCPC(has))
	count := func(d Desc) int {
		n := 0
		if err := c.Walk(d, func(*Probe) bool { n++; return true }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, name := range []string{"BEGIN", "tick-1s", "cycles-kernel-5000"} {
		count(Desc{Name: name})
	}
	if asked != 0 {
		t.Errorf("BEGIN, tick-1s and cycles-kernel-5000 asked the machine about %d events, want none", asked)
	}
	if n := count(Desc{Name: "perf_count_sw_task_clock-all-1000000000"}); n != 1 {
		t.Errorf(":::perf_count_sw_task_clock-all-1000000000 matches %d probes, want 1", n)
	}
	if n := count(Desc{Name: "perf_count_sw_page_faults-all-1000000000"}); n != 1 {
		t.Errorf("a listed probe other than the one named before matches %d probes, want 1", n)
	}
	if n := count(Desc{Provider: "cpc"}); n != 4 { // the three listed and cycles-kernel-5000
		t.Errorf("cpc::: matches %d probes, want 4", n)
	}
}
