package probe

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProviderTable checks that each row of the table makes the
// provider it names, and that an offline catalog leaves out those made
// of tracepoints.
func TestProviderTable(t *testing.T) {
	names := func(c *Catalog) []string {
		var ns []string
		for _, p := range c.Providers() {
			ns = append(ns, p.Name())
		}
		return ns
	}
	k := testKernel(t)
	tests := []struct {
		live bool
		want []string
	}{
		{true, []string{"dtrace", "profile", "syscall", "fbt", "kinst", "proc", "sched", "io", "ip", "tcp", "udp", "lockstat", "cpc", "sdt", "rawtp"}},
		{false, []string{"dtrace", "profile", "syscall", "fbt", "kinst"}},
	}
	for _, tt := range tests {
		c := kernelCatalog(&source{k: k, cfg: &Config{}, arch: "amd64", live: tt.live})
		if diff := cmp.Diff(tt.want, names(c)); diff != "" {
			t.Errorf("live %t: providers (-want +got):\n%s", tt.live, diff)
		}
	}
	for _, r := range providers {
		if got := r.make(r.name, &source{k: k, cfg: &Config{}, live: true}).Name(); got != r.name {
			t.Errorf("row %s makes provider %s", r.name, got)
		}
	}
}
