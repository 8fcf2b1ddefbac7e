package consumer

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/record"
)

// quantized returns quantize()'s data after adding each value with its
// weight, as the kernel's buffer holds it.
func quantized(vals ...[2]int64) []byte {
	w := make([]int64, record.QuantizeNBuckets)
	for _, v := range vals {
		w[record.QuantizeBucket(v[0])] += v[1]
	}
	return wordBytes(w)
}

// lquantized is quantized for lquantize(value, base, limit, step).
func lquantized(base, limit, step int64, vals ...[2]int64) []byte {
	levels := (limit - base) / step
	arg := uint64(step)<<48 | uint64(levels)<<32 | uint64(uint32(int32(base)))
	w := make([]int64, levels+3)
	w[0] = int64(arg)
	for _, v := range vals {
		w[record.LQuantizeBucket(arg, v[0])+1] += v[1]
	}
	return wordBytes(w)
}

// llquantized is quantized for llquantize(value, factor, low, high, nsteps).
func llquantized(factor, low, high, nsteps uint16, nbuckets int, vals ...[2]int64) []byte {
	arg := dof.LLQuantizeArg(factor, low, high, nsteps)
	w := make([]int64, nbuckets+1)
	w[0] = int64(arg)
	for _, v := range vals {
		w[record.LLQuantizeBucket(arg, v[0])+1] += v[1]
	}
	return wordBytes(w)
}

func wordBytes(w []int64) []byte {
	b := make([]byte, 8*len(w))
	for i, v := range w {
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return b
}

const header = "\n           value  ------------- Distribution ------------- count    \n"

// TestHistogram checks the histograms of quantize(), lquantize() and
// llquantize() against the text dtrace prints for the same data
// (dt_print_quantize, dt_print_lquantize, dt_print_llquantize): a zero
// row above and below the buckets with counts, 40 '@' for the total,
// bars rounded to the nearest '@', negative counts drawn to the left
// of the bar, both signs as half bars about a centre line.
func TestHistogram(t *testing.T) {
	tests := []struct {
		name   string
		act    dof.ActKind
		data   []byte
		normal uint64
		zoom   bool
		want   string
	}{
		{"quantize zero", dof.AggQuantize, quantized([2]int64{0, 1}), 1, false, "" +
			"              -1 |                                         0        \n" +
			"               0 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n" +
			"               1 |                                         0        \n"},
		{"quantize empty", dof.AggQuantize, quantized(), 1, false, "" +
			"              -1 |                                         0        \n" +
			"               0 |                                         0        \n" +
			"               1 |                                         0        \n"},
		{"quantize spread", dof.AggQuantize,
			quantized([2]int64{0, 1}, [2]int64{100, 1}, [2]int64{200, 1}, [2]int64{300, 1}, [2]int64{400, 1},
				[2]int64{500, 1}, [2]int64{600, 1}, [2]int64{700, 1}, [2]int64{800, 1}, [2]int64{900, 1}), 1, false, "" +
				"              -1 |                                         0        \n" +
				"               0 |@@@@                                     1        \n" +
				"               1 |                                         0        \n" +
				"               2 |                                         0        \n" +
				"               4 |                                         0        \n" +
				"               8 |                                         0        \n" +
				"              16 |                                         0        \n" +
				"              32 |                                         0        \n" +
				"              64 |@@@@                                     1        \n" +
				"             128 |@@@@                                     1        \n" +
				"             256 |@@@@@@@@@@@@                             3        \n" +
				"             512 |@@@@@@@@@@@@@@@@                         4        \n" +
				"            1024 |                                         0        \n"},
		{"quantize negative counts", dof.AggQuantize, quantized([2]int64{1, -123}), 1, false, "" +
			"               0                                         | 0        \n" +
			"               1 @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@| -123     \n" +
			"               2                                         | 0        \n"},
		{"quantize both signs", dof.AggQuantize,
			quantized([2]int64{0, -123}, [2]int64{-1, -123}, [2]int64{1, 123}, [2]int64{1, 123}), 1, false, "" +
				"              -2                     |                     0        \n" +
				"              -1                @@@@@|                     -123     \n" +
				"               0                @@@@@|                     -123     \n" +
				"               1                     |@@@@@@@@@@           246      \n" +
				"               2                     |                     0        \n"},
		{"quantize normalized", dof.AggQuantize, quantized([2]int64{3, 10}, [2]int64{5, 30}), 10, false, "" +
			"               1 |                                         0        \n" +
			"               2 |@@@@@@@@@@                               1        \n" +
			"               4 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@           3        \n" +
			"               8 |                                         0        \n"},
		{"quantize zoomed", dof.AggQuantize, quantized([2]int64{1, 1}, [2]int64{2, 2}), 1, true, "" +
			"               0 |                                         0        \n" +
			"               1 |@@@@@@@@@@@@@@@@@@@                      1        \n" +
			"               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@   2        \n" +
			"               4 |                                         0        \n"},
		{"lquantize one value", dof.AggLQuantize, lquantized(-100, 1100, 100, [2]int64{0, 1}), 1, false, "" +
			"            -100 |                                         0        \n" +
			"               0 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n" +
			"             100 |                                         0        \n"},
		{"lquantize underflow and overflow", dof.AggLQuantize,
			lquantized(0, 1000, 100, [2]int64{-5, 1}, [2]int64{0, 1}, [2]int64{999, 1}, [2]int64{1000, 1}), 1, false, "" +
				"             < 0 |@@@@@@@@@@                               1        \n" +
				"               0 |@@@@@@@@@@                               1        \n" +
				"             100 |                                         0        \n" +
				"             200 |                                         0        \n" +
				"             300 |                                         0        \n" +
				"             400 |                                         0        \n" +
				"             500 |                                         0        \n" +
				"             600 |                                         0        \n" +
				"             700 |                                         0        \n" +
				"             800 |                                         0        \n" +
				"             900 |@@@@@@@@@@                               1        \n" +
				"         >= 1000 |@@@@@@@@@@                               1        \n"},
		{"lquantize empty", dof.AggLQuantize, lquantized(1, 10, 1), 1, false, "" +
			"             < 1 |                                         0        \n" +
			"               1 |                                         0        \n" +
			"               2 |                                         0        \n"},
		{"llquantize orders", dof.AggLLQuantize,
			// factor 10, orders 0 to 2, 10 steps: <1, 1..9, 10..90, 100..900, >=1000.
			llquantized(10, 0, 2, 10, 29, [2]int64{5, 1}, [2]int64{50, 1}, [2]int64{55, 1}, [2]int64{5000, 1}), 1, false, "" +
				"               4 |                                         0        \n" +
				"               5 |@@@@@@@@@@                               1        \n" +
				"               6 |                                         0        \n" +
				"               7 |                                         0        \n" +
				"               8 |                                         0        \n" +
				"               9 |                                         0        \n" +
				"              10 |                                         0        \n" +
				"              20 |                                         0        \n" +
				"              30 |                                         0        \n" +
				"              40 |                                         0        \n" +
				"              50 |@@@@@@@@@@@@@@@@@@@@                     2        \n" +
				"              60 |                                         0        \n" +
				"              70 |                                         0        \n" +
				"              80 |                                         0        \n" +
				"              90 |                                         0        \n" +
				"             100 |                                         0        \n" +
				"             200 |                                         0        \n" +
				"             300 |                                         0        \n" +
				"             400 |                                         0        \n" +
				"             500 |                                         0        \n" +
				"             600 |                                         0        \n" +
				"             700 |                                         0        \n" +
				"             800 |                                         0        \n" +
				"             900 |                                         0        \n" +
				"         >= 1000 |@@@@@@@@@@                               1        \n"},
		{"llquantize underflow", dof.AggLLQuantize, llquantized(10, 1, 2, 10, 20, [2]int64{3, 1}), 1, false, "" +
			"            < 10 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n" +
			"              10 |                                         0        \n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := hist(tt.act, tt.data)
			if err != nil {
				t.Fatal(err)
			}
			var sb strings.Builder
			h.write(&sb, tt.normal, tt.zoom)
			if diff := cmp.Diff(strings.Split(header+tt.want, "\n"), strings.Split(sb.String(), "\n")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestHistogramUTF8 checks the bars of the encoding option's utf8: full
// blocks, then the eighth block for the rest (dt_print_quantline_utf8).
func TestHistogramUTF8(t *testing.T) {
	h, err := hist(dof.AggQuantize, quantized([2]int64{1, 1}, [2]int64{2, 2}))
	if err != nil {
		t.Fatal(err)
	}
	h.utf8 = true
	var sb strings.Builder
	h.write(&sb, 1, false)
	// 1 of 3 is 13⅓ columns: 13 blocks and U+258E (two eighths); 2 of 3
	// is 26⅔: 26 and U+258B (five eighths).
	want := header +
		"               0 |                                         0        \n" +
		"               1 |" + strings.Repeat("\u2588", 13) + "\u258e" + strings.Repeat(" ", 26) + " 1        \n" +
		"               2 |" + strings.Repeat("\u2588", 26) + "\u258b" + strings.Repeat(" ", 13) + " 2        \n" +
		"               4 |                                         0        \n"
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(sb.String(), "\n")); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestHistogramMismatch checks that data of the wrong size is refused
// as libdtrace refuses it (EDT_DMISMATCH), not printed.
func TestHistogramMismatch(t *testing.T) {
	for _, tt := range []struct {
		act  dof.ActKind
		data []byte
	}{
		{dof.AggQuantize, make([]byte, 8*10)},
		{dof.AggLQuantize, nil},
		{dof.AggLQuantize, lquantized(0, 10, 1)[:8*5]},
		{dof.AggLLQuantize, make([]byte, 16)},
	} {
		if _, err := hist(tt.act, tt.data); err == nil || err.Error() != errDMismatch {
			t.Errorf("%v of %d bytes: got %v, want %q", tt.act, len(tt.data), err, errDMismatch)
		}
	}
}

// TestPacked checks the characters of a packed histogram's buckets and
// the widths of its bounds (dt_print_packed, dt_ndigits).
func TestPacked(t *testing.T) {
	for _, tt := range []struct {
		n     int64
		total float64
		utf8  bool
		want  string
	}{
		{0, 10, false, " "}, {1, 100, false, "_"}, {50, 100, false, "x"}, {100, 100, false, "X"},
		{-1, 100, false, "v"}, {-100, 100, false, "V"}, {100, 100, true, "\u2588"}, {1, 100, true, "\u2581"},
	} {
		if got := packed(tt.n, tt.total, tt.utf8); got != tt.want {
			t.Errorf("packed(%d, %g, %v) = %q, want %q", tt.n, tt.total, tt.utf8, got, tt.want)
		}
	}
	for _, tt := range []struct {
		v    int64
		want int
	}{
		{0, 4}, {2, 4}, {-1, 4}, {2147483648, 10}, {8589934592, 10}, {-4611686018427387904, 20},
		{-9223372036854775808, 20},
	} {
		if got := ndigits(tt.v); got != tt.want {
			t.Errorf("ndigits(%d) = %d, want %d", tt.v, got, tt.want)
		}
	}
}
