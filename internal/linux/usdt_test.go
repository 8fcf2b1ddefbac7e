package linux

import (
	"testing"

	"github.com/kdtrace/kdtrace/internal/probe"
)

func TestUSDTAnyProcess(t *testing.T) {
	p := &probe.Probe{Provider: "test_prov1234", Module: "test", Function: "main", Name: "go"}
	site := &probe.USDTSite{PID: 1234, Path: "/tmp/test"}
	for _, tt := range []struct {
		desc string
		want bool
	}{
		{"test_prov1234", false},
		{"test_prov*1234", false},
		{"test_prov*4", false},
		{"test_prov*", true},
		{"test_*", true},
		{"*", true},
		{"", true},
		{"test_prov[0-9]*", true},
	} {
		if got := usdtAnyProcess(p, site, tt.desc); got != tt.want {
			t.Errorf("usdtAnyProcess(%q) = %v, want %v", tt.desc, got, tt.want)
		}
	}
	// A provider not named for its process is its process's alone.
	if usdtAnyProcess(&probe.Probe{Provider: "odd"}, site, "*") {
		t.Error("usdtAnyProcess(odd) = true")
	}
}
