package record_test

import (
	"os"
	"testing"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/dtracetest"
	"github.com/kdtrace/kdtrace/internal/enabling"
	"github.com/kdtrace/kdtrace/record"
)

// TestCorpusLayouts lays out every ECB of the suite's scripts that
// compile here without cpp and that enabling.Load takes: each must lay
// out, as the kernel enables what it took, and every layout must keep
// the kernel's invariants — records inside the firing, at offsets of
// their alignment, in order; keys and aggregations beyond the records
// before them, inside the needed size.
func TestCorpusLayouts(t *testing.T) {
	files := dtracetest.Files(t, "tst.*.d")
	progs, ecbs := 0, 0
	for _, f := range files {
		p := load(f)
		if p == nil {
			continue
		}
		progs++
		l := record.NewLayout(record.OptionsOf(p))
		for i := range p.ECBs {
			ecbs++
			eps, err := l.Add(&p.ECBs[i], []record.Probe{{ID: uint32(i + 1)}})
			if err != nil {
				t.Errorf("%s: ECB %d: %v", dtracetest.Rel(t, f), i, err)
				continue
			}
			if msg := invariant(eps[0]); msg != "" {
				t.Errorf("%s: ECB %d: %s", dtracetest.Rel(t, f), i, msg)
			}
		}
	}
	t.Logf("%d ECBs of %d programs laid out", ecbs, progs)
}

// load compiles a script and loads its DOF, or returns nil.
func load(path string) *enabling.Program {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	dp, err := dtracetest.Compile(path, src, dtracetest.ParserConfig(path))
	if err != nil {
		return nil
	}
	b, err := dof.Write(dp, nil)
	if err != nil {
		return nil
	}
	k, err := enabling.Load(b, nil)
	if err != nil {
		return nil
	}
	return k
}

func invariant(ep *record.EProbe) string {
	switch {
	case ep.Size%4 != 0 || ep.Needed%4 != 0:
		return "size not a multiple of 4"
	case ep.Size != 0 && ep.Size < record.RecHdrSize:
		return "size smaller than the header"
	case ep.Needed < ep.Size:
		return "needs less than its size"
	case ep.Alignment != 4 && ep.Alignment != 8:
		return "alignment neither 4 nor 8"
	}
	end := uint32(record.RecHdrSize)
	for _, a := range ep.Actions {
		if a.Offset%uint32(a.Alignment) != 0 {
			return "a record off its alignment"
		}
		if a.Offset+a.Size > ep.Needed {
			return "a record beyond the needed size"
		}
		if a.IsAgg() || a.InTuple {
			// A key is built beyond the records before it; the records
			// after it may reuse that room once the key is aggregated.
			if a.Size != 0 && a.Offset < end {
				return "a key or aggregation over the records before it"
			}
			continue
		}
		if ep.Size != 0 && a.Offset+a.Size > ep.Size {
			return "a record beyond the firing"
		}
		if a.Offset < end {
			return "records out of order"
		}
		end = a.Offset + a.Size
	}
	return ""
}
