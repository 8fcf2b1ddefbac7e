package amd64

import (
	"debug/elf"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cat concatenates byte sequences: one per instruction in the tables.
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

type op struct {
	len    int
	kind   kind
	target uint64
}

const base = 0x1000

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		code []byte
		want []op // from base on
	}{{
		name: "endbr64 and the ftrace NOP",
		code: cat(
			[]byte{0xf3, 0x0f, 0x1e, 0xfa},       // endbr64
			[]byte{0x0f, 0x1f, 0x44, 0x00, 0x00}, // nopl 0x0(%rax,%rax,1)
			[]byte{0x55},                         // push %rbp
			[]byte{0xc3},                         // ret
		),
		want: []op{{4, Plain, 0}, {5, nop, 0}, {1, Plain, 0}, {1, Ret, 0}},
	}, {
		name: "silent mis-decodes and unknowns of x86asm",
		code: cat(
			[]byte{0xf3, 0x0f, 0x1e, 0xfb},       // endbr32
			[]byte{0xf3, 0x48, 0x0f, 0x1e, 0xc8}, // rdsspq %rax
			[]byte{0x0f, 0x1e, 0xc8},             // hint nop
			[]byte{0x0f, 0x01, 0xca},             // clac
			[]byte{0x0f, 0x01, 0xee},             // rdpkru
			[]byte{0xf3, 0x0f, 0x01, 0xd9},       // vmgexit
			[]byte{0x66, 0x0f, 0x38, 0xf6, 0xc1}, // adcx %ecx,%eax
			[]byte{0xf3, 0x0f, 0xc7, 0xf8},       // rdpid %rax
			[]byte{0x0f, 0xc7, 0xf8},             // rdseed %eax
			[]byte{0xc3},
		),
		want: []op{{4, Plain, 0}, {5, Plain, 0}, {3, Plain, 0}, {3, Plain, 0}, {3, Plain, 0}, {4, Plain, 0}, {5, Plain, 0}, {4, Plain, 0}, {3, Plain, 0}, {1, Ret, 0}},
	}, {
		name: "prefixes and padding",
		code: cat(
			[]byte{0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0},       // cs nopw 0x0(%rax,%rax,1)
			[]byte{0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}, // data16 cs nopw
			[]byte{0x66, 0x90},                                  // xchg %ax,%ax
			[]byte{0xf0, 0x48, 0x0f, 0xb1, 0x0e},                // lock cmpxchg %rcx,(%rsi)
			[]byte{0x48, 0x8b, 0x05, 0x10, 0, 0, 0},             // mov 0x10(%rip),%rax
			[]byte{0x65, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0}, // mov %gs:0x28,%rax
			[]byte{0xf3, 0xc3},                                  // rep ret
		),
		want: []op{{10, nop, 0}, {11, nop, 0}, {2, nop, 0}, {5, Plain, 0}, {7, Plain, 0}, {9, Plain, 0}, {2, Ret, 0}},
	}, {
		name: "branches",
		code: cat(
			[]byte{0x74, 0x0c},                   // 0x1000 je 0x100e
			[]byte{0xe8, 0xf0, 0xff, 0xff, 0xff}, // 0x1002 call 0xff7
			[]byte{0xff, 0xd0},                   // 0x1007 call *%rax
			[]byte{0xe3, 0x03},                   // 0x1009 jrcxz 0x100e
			[]byte{0xff, 0xe0},                   // 0x100b jmp *%rax
			[]byte{0x0f},                         // 0x100d a stray byte
			[]byte{0xeb, 0xfe},                   // 0x100e jmp 0x100e
		),
		want: []op{{2, condJump, 0x100e}, {5, Call, 0xff7}, {2, indirectCall, 0}, {2, condJump, 0x100e}, {2, indirectJump, 0}, {1, Data, 0}, {2, jump, 0x100e}},
	}, {
		name: "jump table in text after ud2",
		code: cat(
			[]byte{0xff, 0x24, 0xc5, 0, 0, 0, 0}, // 0x1000 jmp *0x0(,%rax,8)
			[]byte{0x0f, 0x0b},                   // 0x1007 ud2
			[]byte{0x06, 0x06, 0x06, 0x06},       // 0x1009 table bytes: invalid in 64-bit mode
			[]byte{0x31, 0xc0},                   // 0x100d xor %eax,%eax (a case)
			[]byte{0xc3},                         // 0x100f ret
		),
		want: []op{{7, indirectJump, 0}, {2, Trap, 0}, {4, Data, 0}, {2, Plain, 0}, {1, Ret, 0}},
	}, {
		name: "jump over a lock prefix",
		code: cat(
			[]byte{0x74, 0x01},             // 0x1000 je 0x1003: past the lock
			[]byte{0xf0, 0x48, 0xff, 0x0f}, // 0x1002 lock decq (%rdi)
			[]byte{0xc3},                   // 0x1006 ret
		),
		want: []op{{2, condJump, 0x1003}, {4, Plain, 0}, {1, Ret, 0}},
	}, {
		name: "jump over a lock prefix, seen first",
		code: cat(
			[]byte{0xeb, 0x05},             // 0x1000 jmp 0x1007
			[]byte{0xf0, 0x48, 0xff, 0x0f}, // 0x1002 lock decq (%rdi)
			[]byte{0xc3},                   // 0x1006 ret
			[]byte{0x75, 0xf9},             // 0x1007 jne 0x1002
			[]byte{0xeb, 0xf8},             // 0x1009 jmp 0x1003: decoded first
		),
		want: []op{{2, jump, 0x1007}, {4, Plain, 0}, {1, Ret, 0}, {2, condJump, 0x1002}, {2, jump, 0x1003}},
	}, {
		name: "data that decodes as a branch into an instruction",
		code: cat(
			[]byte{0xc3},             // 0x1000 ret
			[]byte{0xeb, 0x02},       // 0x1001 "jmp 0x1005", inside the next instruction
			[]byte{0x48, 0x89, 0xc8}, // 0x1003 mov %rcx,%rax
			[]byte{0xcc},             // 0x1006 int3
		),
		want: []op{{1, Ret, 0}, {2, Data, 0}, {3, Plain, 0}, {1, Trap, 0}},
	}}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			insts, err := Decode(tt.code, base)
			if err != nil {
				t.Fatal(err)
			}
			var want []Inst
			addr := uint64(base)
			for _, o := range tt.want {
				want = append(want, Inst{Addr: addr, Len: o.len, Op: o.kind, Target: o.target})
				addr += uint64(o.len)
			}
			if diff := cmp.Diff(want, insts); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		code []byte
		want *decodeError
	}{
		{"invalid opcode on the path", []byte{0x90, 0x06, 0xc3}, &decodeError{Addr: base + 1, Bytes: []byte{0x06, 0xc3}, Err: errUnknown}},
		{"AMD XOP", []byte{0x8f, 0xe9, 0x78, 0xe1, 0xc1, 0xc3}, &decodeError{Addr: base, Bytes: []byte{0x8f, 0xe9, 0x78, 0xe1, 0xc1, 0xc3}, Err: errUnknown}},
		{"truncated", []byte{0xe8, 0x00, 0x00}, &decodeError{Addr: base, Bytes: []byte{0xe8, 0x00, 0x00}, Err: errTruncated}},
		{"jump into an instruction", []byte{0xeb, 0xff}, &decodeError{Addr: base + 1, Bytes: []byte{0xff}, Err: errOverlap}},
		{"empty", nil, &decodeError{Addr: base, Err: errEmpty}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.code, base)
			var got *decodeError
			if !errors.As(err, &got) {
				t.Fatalf("got %v, want a *DecodeError", err)
			}
			if diff := cmp.Diff(*tt.want, *got, cmpopts.EquateErrors()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	_, err := Decode([]byte{0x06}, 0xffffffff81000000)
	if want := "amd64: cannot decode instruction at 0xffffffff81000000 (06): unknown instruction"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestCheckOffset(t *testing.T) {
	code := cat(
		[]byte{0xf3, 0x0f, 0x1e, 0xfa},       // 0 endbr64
		[]byte{0x0f, 0x1f, 0x44, 0x00, 0x00}, // 4 ftrace NOP
		[]byte{0x41, 0x57},                   // 9 push %r15
		[]byte{0x48, 0x83, 0xec, 0x68},       // 11 sub $0x68,%rsp
		[]byte{0xc3},                         // 15 ret
		[]byte{0x06, 0x06},                   // 16 data
	)
	f, err := NewFunction(code, base)
	if err != nil {
		t.Fatal(err)
	}
	if nop, ok := f.FtraceNOP(); !ok || nop.Addr != base+4 {
		t.Errorf("FtraceNOP() = %v, %v; want the NOP at %#x", nop, ok, base+4)
	}
	tests := []struct {
		off  uint64
		want string // "" for a boundary
	}{
		{0, ""},
		{4, ""},
		{9, ""},
		{15, ""},
		{6, "offset 6 is inside the 5-byte ftrace NOP (nearest boundaries: 4 and 9)"},
		{12, "offset 12 is not an instruction boundary (nearest boundaries: 11 and 15)"},
		{1, "offset 1 is not an instruction boundary (nearest boundaries: 0 and 4)"},
		{17, "offset 17 is in data, not code (nearest boundary: 15)"},
		{16, "offset 16 is in data, not code (nearest boundary: 15)"},
		{18, "offset 18 is past the end of the function (size 18)"},
	}
	for _, tt := range tests {
		err := f.CheckOffset(tt.off)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckOffset(%d) = %q, want %q", tt.off, got, tt.want)
		}
	}
	var oe *OffsetError
	if !errors.As(f.CheckOffset(12), &oe) || oe.Below != 11 || oe.Above != 15 {
		t.Errorf("CheckOffset(12) = %#v", oe)
	}
}

// benchLib is a large library with function symbols, present on Debian.
const benchLib = "/lib/x86_64-linux-gnu/libc.so.6"

// BenchmarkDecode decodes the functions of benchLib one by one, and its
// whole .text as if it were one function.
func BenchmarkDecode(b *testing.B) {
	f, err := elf.Open(benchLib)
	if err != nil {
		b.Skip(err)
	}
	defer f.Close()
	text := f.Section(".text")
	if text == nil {
		b.Skip("no .text")
	}
	code, err := text.Data()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("functions", func(b *testing.B) {
		benchDecode(b, functions(b, f))
	})
	b.Run("text", func(b *testing.B) {
		benchDecode(b, []funcSym{{".text", text.Addr, code}})
	})
}

func benchDecode(b *testing.B, fns []funcSym) {
	var size, insts int
	for _, fn := range fns {
		size += len(fn.code)
	}
	b.SetBytes(int64(size))
	start := time.Now()
	for b.Loop() {
		insts = 0
		for _, fn := range fns {
			in, err := Decode(fn.code, fn.addr)
			if err != nil {
				b.Fatal(err)
			}
			insts += len(in)
		}
	}
	b.ReportMetric(float64(insts)*float64(b.N)/time.Since(start).Seconds(), "insts/s")
}

func TestTrimPadding(t *testing.T) {
	for _, tt := range []struct {
		name    string
		code    []byte
		wantLen int
	}{
		{"int3 after ret", []byte{0x31, 0xc0, 0xc3, 0xcc, 0xcc, 0xcc}, 3},
		{"nops after ret", []byte{0x31, 0xc0, 0xc3, 0x90, 0x66, 0x90, 0x0f, 0x1f, 0x00}, 3},
		{"no padding", []byte{0x31, 0xc0, 0xc3}, 3},
		// int3 reached by falling through a call (to a function that
		// does not return) is code.
		{"after a call", []byte{0xe8, 0x00, 0x00, 0x00, 0x00, 0xcc, 0xcc}, 7},
		// A jump targets the int3 after the ret: it is code.
		{"targeted int3", []byte{0x74, 0x01, 0xc3, 0xcc, 0xcc}, 4},
	} {
		got, err := TrimPadding(tt.code, 0x1000)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if len(got) != tt.wantLen {
			t.Errorf("%s: %d bytes kept, want %d", tt.name, len(got), tt.wantLen)
		}
	}
}
