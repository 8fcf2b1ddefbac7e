package bpf

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFit checks that each size option is halved until its maps fit
// the limit and the kernel's bounds, and said so, or refused under the
// manual policy; that a map as small as it goes fits any limit; and
// that the ring buffer holds bufsize of each CPU's records, the whole
// ring counted against the limit and the lowered bufsize a CPU's.
func TestFit(t *testing.T) {
	// An aggregation of 8-byte keys and values, a by-reference
	// associative array.
	agg := aggMap{key: 8, value: 8 + AggTouched}
	tests := []struct {
		name    string
		ncpu    int // 0: 4
		cfg     Config
		aggs    bool
		big     bool // an aggregation of 64 KiB values instead
		want    []Lowered
		wantErr error
		ring    uint32 // bytes of the ring buffer once fit
		threads uint32 // entries of the maps of dynamic variables
		fill    uint32 // bytes of a CPU's records under the fill policy
	}{
		{name: "defaults", cfg: Config{Limit: 64 << 20}, aggs: true, ring: 16 << 20, threads: 4096},
		{name: "under the limit", cfg: Config{BufSize: 16 << 20, Limit: 64 << 20}, ring: 64 << 20, threads: 4096},
		// A ring of bufsize a CPU, rounded up to a power of two.
		{name: "one CPU", ncpu: 1, cfg: Config{BufSize: 1 << 20}, ring: 1 << 20, threads: 4096},
		{name: "three CPUs", ncpu: 3, cfg: Config{BufSize: 1 << 20}, ring: 4 << 20, threads: 4096},
		{name: "a page at least", ncpu: 2, cfg: Config{BufSize: 8}, ring: 4096, threads: 4096},
		// The whole ring under the limit: 64m over 4 CPUs, 16m each.
		{name: "bufsize", cfg: Config{BufSize: 1 << 40, Limit: 64 << 20},
			want: []Lowered{{"bufsize", 16 << 20}}, ring: 64 << 20, threads: 4096},
		{name: "bufsize on two CPUs", ncpu: 2, cfg: Config{BufSize: 1 << 40, Limit: 64 << 20},
			want: []Lowered{{"bufsize", 32 << 20}}, ring: 64 << 20, threads: 4096},
		// 100t halved until 4 of it round up to a power of two that
		// fits: 12.5m, a ring of 64m.
		{name: "bufsize not a power of two", cfg: Config{BufSize: 100 << 40, Limit: 64 << 20},
			want: []Lowered{{"bufsize", 100 << 17}}, ring: 64 << 20, threads: 4096},
		{name: "bufsize without a limit", cfg: Config{BufSize: 1 << 40},
			want: []Lowered{{"bufsize", 1 << 29}}, ring: 1 << 31, threads: 4096},
		// The kernel's largest ring bounds even the default.
		{name: "default past the largest ring", ncpu: 1024, cfg: Config{},
			want: []Lowered{{"bufsize", 2 << 20}}, ring: 1 << 31, threads: 4096},
		{name: "manual default past the largest ring", ncpu: 1024, cfg: Config{Manual: true}, wantErr: ErrNoMemory},
		{name: "bufsize of all CPUs past 64 bits", cfg: Config{BufSize: 1 << 62},
			want: []Lowered{{"bufsize", 1 << 29}}, ring: 1 << 31, threads: 4096},
		// No lower than the defaults, whatever the limit.
		{name: "least", cfg: Config{BufSize: 1 << 40, AggSize: 1 << 40, DynVarSize: 1 << 40, Limit: 1}, aggs: true,
			want: []Lowered{{"bufsize", DefaultBufSize}, {"aggsize", defaultAggSize}, {"dynvarsize", defaultDynVarSize}},
			ring: 4 * DefaultBufSize, threads: defaultDynVarSize / DynVarBytes},
		{name: "defaults over the limit", cfg: Config{Limit: 1}, aggs: true, ring: 4 * DefaultBufSize, threads: defaultDynVarSize / DynVarBytes},
		// Maps as small as they go fit whatever the limit.
		{name: "fewest aggregation entries", cfg: Config{AggSize: 32 << 20, Limit: 1}, big: true,
			ring: 4 * DefaultBufSize, threads: defaultDynVarSize / DynVarBytes},
		{name: "dynvarsize", cfg: Config{DynVarSize: 1 << 40, Limit: 64 << 20},
			want: []Lowered{{"dynvarsize", 16 << 20}}, ring: 16 << 20, threads: 16 << 20 / DynVarBytes},
		// Two maps of 8m each: the probes' and the snapshot's.
		{name: "aggsize", cfg: Config{AggSize: 1 << 40, Limit: 64 << 20}, aggs: true,
			want: []Lowered{{"aggsize", 8 << 20}}, ring: 16 << 20, threads: 4096},
		{name: "aggsize without aggregations", cfg: Config{AggSize: 1 << 40, Limit: 64 << 20}, ring: 16 << 20, threads: 4096},
		{name: "all", cfg: Config{BufSize: 1 << 40, AggSize: 1 << 40, DynVarSize: 1 << 40, Limit: 64 << 20}, aggs: true,
			want: []Lowered{{"bufsize", 16 << 20}, {"aggsize", 8 << 20}, {"dynvarsize", 16 << 20}}, ring: 64 << 20, threads: 16 << 20 / DynVarBytes},
		// Under the fill policy a CPU holds the lowered bufsize.
		{name: "fill", cfg: Config{BufSize: 1 << 40, Fill: math.MaxUint32, Limit: 64 << 20},
			want: []Lowered{{"bufsize", 16 << 20}}, ring: 64 << 20, threads: 4096, fill: 16 << 20},
		{name: "fill under bufsize", cfg: Config{BufSize: 1 << 20, Fill: 4096}, ring: 4 << 20, threads: 4096, fill: 4096},
		{name: "manual", cfg: Config{BufSize: 1 << 40, Limit: 64 << 20, Manual: true}, wantErr: ErrNoMemory},
		{name: "manual over the limit on all CPUs", cfg: Config{BufSize: 32 << 20, Limit: 64 << 20, Manual: true}, wantErr: ErrNoMemory},
		{name: "manual aggsize", cfg: Config{AggSize: 1 << 40, Limit: 64 << 20, Manual: true}, aggs: true, wantErr: ErrNoMemory},
		{name: "manual under the limit", cfg: Config{BufSize: 16 << 20, Limit: 64 << 20, Manual: true}, ring: 64 << 20, threads: 4096},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ncpu := tt.ncpu
			if ncpu == 0 {
				ncpu = 4
			}
			l, err := NewLayout(&tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if tt.aggs {
				l.shapes = append(l.shapes, agg)
			}
			if tt.big {
				l.shapes = append(l.shapes, aggMap{key: 8, value: 64 << 10})
			}
			got, err := l.fit(ncpu)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("fit: %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lowered (-want +got):\n%s", diff)
			}
			if l.ring != tt.ring || l.threads != tt.threads || l.fill != tt.fill {
				t.Errorf("ring %d, %d dynamic variables, fill %d; want %d, %d and %d", l.ring, l.threads, l.fill, tt.ring, tt.threads, tt.fill)
			}
			// Each lowered option fits, or is no more than its
			// default, and would not fit at twice its value: it was
			// halved no more than needed.
			for _, lw := range got {
				cost := map[string]func(uint64) (uint64, bool){
					"bufsize":    func(v uint64) (uint64, bool) { return ringCost(v, ncpu) },
					"dynvarsize": l.dynVarCost,
					"aggsize":    func(v uint64) (uint64, bool) { return l.aggCost(v, ncpu) }}[lw.Option]
				def := map[string]uint64{"bufsize": DefaultBufSize, "aggsize": defaultAggSize, "dynvarsize": defaultDynVarSize}[lw.Option]
				if c, least := cost(lw.Value); c == math.MaxUint64 || lw.Value > def && !least && tt.cfg.Limit != 0 && c > tt.cfg.Limit {
					t.Errorf("%s %d takes %d bytes, over %d", lw.Option, lw.Value, c, tt.cfg.Limit)
				}
				if c, _ := cost(2 * lw.Value); c != math.MaxUint64 && (tt.cfg.Limit == 0 || c <= tt.cfg.Limit) {
					t.Errorf("%s %d is lowered too far: twice it takes %d bytes, within %d", lw.Option, lw.Value, c, tt.cfg.Limit)
				}
			}
		})
	}
}
