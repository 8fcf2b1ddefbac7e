package dtrace

import (
	"errors"
	"fmt"
	"io"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// ErrBufTooSmall is Enable's refusal of a buffer set smaller than a
// record and that the programs need: dtrace_state_go's ENOSPC, in
// libdtrace's words.
var ErrBufTooSmall = errors.New("Enabling exceeds size of buffer")

// tooSmall refuses a size option set below 8 bytes, the least buffer
// dtrace_state_go makes, when its buffer is needed: always the
// principal buffer (libdtrace's ERROR clause records data), the
// aggregation buffer when an ECB aggregates, the speculations' when one
// speculates.
func tooSmall(k *enabling.Program, size func(name string) (uint64, bool)) error {
	var aggs, specs bool
	for _, e := range k.ECBs {
		for _, a := range e.Actions {
			aggs = aggs || a.Kind.IsAgg()
			specs = specs || a.Kind == dof.ActSpeculate
		}
	}
	for _, o := range []struct {
		name   string
		needed bool
	}{{"bufsize", true}, {"aggsize", aggs}, {"specsize", specs}} {
		if n, ok := size(o.name); ok && o.needed && n < 8 {
			return ErrBufTooSmall
		}
	}
	return nil
}

// lowered names the size options as dtrace(1) reports them lowered, in
// its order.
var lowered = []struct{ option, name string }{
	{"bufsize", "buffer size"},
	{"aggsize", "aggregation size"},
	{"specsize", "speculation size"},
	{"dynvarsize", "dynamic variable size"},
}

// reportLowered says which size options were lowered for their buffers
// to fit, as dtrace(1) does once tracing has started.
func (tr *Tracing) reportLowered(w io.Writer) {
	for _, o := range lowered {
		for _, lw := range tr.t.Lowered {
			if lw.Option == o.option && lw.Value != 0 {
				fmt.Fprintf(w, "%s: %s lowered to %s\n", tr.h.cfg.Name, o.name, sizeText(lw.Value))
			}
		}
	}
}

// sizeText writes a size as dtrace(1) reports one lowered: in the
// largest unit below it that divides it (k, m, g …, a blank for
// bytes), else in bytes.
func sizeText(n uint64) string {
	j, shift := 0, 0
	for shift+10 < 64 && uint64(1)<<(shift+10) <= n {
		j++
		shift += 10
	}
	if n&(uint64(1)<<shift-1) == 0 {
		return fmt.Sprintf("%d%c", n>>shift, " kmgtpe"[j])
	}
	return fmt.Sprintf("%d bytes", n)
}
