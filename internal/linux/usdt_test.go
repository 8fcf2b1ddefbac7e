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

// TestUSDTRegister checks register names at each size, the second byte
// registers, and names that are none.
func TestUSDTRegister(t *testing.T) {
	tests := []struct {
		name string
		want usdtReg
		ok   bool
	}{
		{"rax", usdtReg{80, 8, 0}, true},
		{"eax", usdtReg{80, 4, 0}, true},
		{"ax", usdtReg{80, 2, 0}, true},
		{"al", usdtReg{80, 1, 0}, true},
		{"ah", usdtReg{80, 1, 8}, true},
		{"dil", usdtReg{112, 1, 0}, true},
		{"rsp", usdtReg{152, 8, 0}, true},
		{"r8", usdtReg{72, 8, 0}, true},
		{"r8d", usdtReg{72, 4, 0}, true},
		{"r12w", usdtReg{24, 2, 0}, true},
		{"r15b", usdtReg{0, 1, 0}, true},
		{"", usdtReg{}, false},
		{"sih", usdtReg{}, false},
		{"r7", usdtReg{}, false},
		{"r16", usdtReg{}, false},
		{"r08", usdtReg{}, false},
		{"r8l", usdtReg{}, false},
		{"raxd", usdtReg{}, false},
		{"rip", usdtReg{}, false},
	}
	for _, tt := range tests {
		got, ok := usdtRegister(tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("usdtRegister(%q) = %v, %t; want %v, %t", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
