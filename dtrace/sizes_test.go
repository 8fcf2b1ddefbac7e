package dtrace

import "testing"

// TestSizeText checks sizes as dtrace(1) writes them lowered.
func TestSizeText(t *testing.T) {
	for n, want := range map[uint64]string{
		8:             "8 ",
		1000:          "1000 ",
		1 << 10:       "1k",
		1536:          "1536 bytes",
		50 << 20:      "50m",
		64<<20 + 8:    "67108872 bytes",
		3 << 30:       "3g",
		1 << 40:       "1t",
		1 << 63:       "8e",
		1<<63 + 1<<60: "9e",
	} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
}
