package linux

import "github.com/kdtrace/kdtrace/internal/bpf"

// fit takes the size options the runtime's maps were fit to, and fits
// the speculations' buffers, which the consumer holds, to the same
// limit: nspec of specsize bytes at most, specsize halved until they
// fit as the kernel halves a buffer it cannot allocate, or refused
// under the manual policy.
func (t *Tracing) fit(cfg *Config) error {
	t.Lowered = t.rt.Lowered
	for _, lw := range t.Lowered {
		if lw.Option == "bufsize" && t.ringSize != 0 {
			// Under the ring policy a CPU keeps bufsize of firings.
			t.ringSize = int(lw.Value)
		}
	}
	limit, nspec := cfg.BPF.Limit, uint64(max(1, cfg.BPF.NSpec))
	v := uint64(t.specSize)
	if limit == 0 || v <= limit/nspec {
		return nil
	}
	if cfg.BPF.Manual {
		return bpf.ErrNoMemory
	}
	for v > limit/nspec {
		v = v / 2 &^ 7
	}
	t.specSize = int(v)
	t.Lowered = append(t.Lowered, bpf.Lowered{Option: "specsize", Value: v})
	return nil
}
