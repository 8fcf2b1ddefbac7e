package amd64

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustFunction(t *testing.T, code []byte) *Function {
	t.Helper()
	f, err := NewFunction(code, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestGraph(t *testing.T) {
	f := mustFunction(t, cat(
		[]byte{0x31, 0xc0}, // 0x0 xor %eax,%eax
		[]byte{0x85, 0xff}, // 0x2 test %edi,%edi
		[]byte{0x7e, 0x07}, // 0x4 jle 0xd
		[]byte{0xff, 0xc0}, // 0x6 inc %eax        loop
		[]byte{0xff, 0xcf}, // 0x8 dec %edi
		[]byte{0x75, 0xfa}, // 0xa jne 0x6
		[]byte{0x90},       // 0xc nop
		[]byte{0xc3},       // 0xd ret
	))
	type block struct {
		Addr  uint64
		Succs []uint64
		Back  []bool
		Idom  uint64 // 0 for none: the entry is at 0 and dominates all
	}
	var got []block
	for _, b := range f.Blocks {
		g := block{Addr: b.Addr()}
		for _, s := range b.Succs {
			g.Succs = append(g.Succs, s.Addr())
			g.Back = append(g.Back, b.IsBackEdge(s))
		}
		if d := b.Idom(); d != nil {
			g.Idom = d.Addr()
		}
		got = append(got, g)
	}
	want := []block{
		{Addr: 0x0, Succs: []uint64{0xd, 0x6}, Back: []bool{false, false}},
		{Addr: 0x6, Succs: []uint64{0x6, 0xc}, Back: []bool{true, false}, Idom: 0x0},
		{Addr: 0xc, Succs: []uint64{0xd}, Back: []bool{false}, Idom: 0x6},
		{Addr: 0xd, Idom: 0x0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	b6, _ := f.Block(0x6)
	bd, _ := f.Block(0xd)
	if !f.Blocks[0].Dominates(bd) || b6.Dominates(bd) || !b6.Dominates(b6) {
		t.Error("Dominates is wrong")
	}
}

// Hand-assembled functions for ExitSites, each instruction with its
// address.
var (
	diamond = cat(
		[]byte{0x85, 0xff},       // 0x00 test %edi,%edi
		[]byte{0x74, 0x08},       // 0x02 je 0x0c
		[]byte{0x89, 0xf8},       // 0x04 mov %edi,%eax
		[]byte{0x01, 0xc0},       // 0x06 add %eax,%eax
		[]byte{0x01, 0xf0},       // 0x08 add %esi,%eax
		[]byte{0xeb, 0x02},       // 0x0a jmp 0x0e
		[]byte{0x31, 0xc0},       // 0x0c xor %eax,%eax
		[]byte{0x83, 0xc0, 0x01}, // 0x0e add $1,%eax
		[]byte{0xc3},             // 0x11 ret
	)
	tailCalls = cat(
		[]byte{0x85, 0xff},                         // 0x00 test %edi,%edi
		[]byte{0x0f, 0x85, 0xf8, 0x0f, 0x00, 0x00}, // 0x02 jne 0x1000: conditional tail call
		[]byte{0xe9, 0xf3, 0x1f, 0x00, 0x00},       // 0x08 jmp 0x2000: tail call
	)
	latchLoop = cat(
		[]byte{0x31, 0xc0}, // 0x00 xor %eax,%eax
		[]byte{0x01, 0xf8}, // 0x02 add %edi,%eax  loop head, caller
		[]byte{0xff, 0xcf}, // 0x04 dec %edi       copy
		[]byte{0x75, 0xfa}, // 0x06 jne 0x02       copy: the latch
		[]byte{0xc3},       // 0x08 ret
	)
	// A loop entered in its middle has two entries, so neither block
	// dominates the other and no edge closes the loop by dominance.
	twoEntryLoop = cat(
		[]byte{0x85, 0xff}, // 0x00 test %edi,%edi
		[]byte{0x74, 0x04}, // 0x02 je 0x08        into the loop's middle
		[]byte{0x89, 0xf8}, // 0x04 mov %edi,%eax  copy
		[]byte{0x01, 0xc0}, // 0x06 add %eax,%eax  copy
		[]byte{0xff, 0xcf}, // 0x08 dec %edi       caller
		[]byte{0x75, 0xf8}, // 0x0a jne 0x04
		[]byte{0xc3},       // 0x0c ret
	)
	// The padding gcc puts before a loop head has no predecessor.
	paddedLoop = cat(
		[]byte{0xeb, 0x01}, // 0x00 jmp 0x03        copy
		[]byte{0x90},       // 0x02 nop             padding
		[]byte{0xff, 0xcf}, // 0x03 dec %edi        copy: the loop
		[]byte{0x75, 0xfc}, // 0x05 jne 0x03
		[]byte{0xc3},       // 0x07 ret             caller
	)
	jumpTable = cat(
		[]byte{0xff, 0xe0}, // 0x00 jmp *%rax
		[]byte{0x31, 0xc0}, // 0x02 xor %eax,%eax: reached only through the table
		[]byte{0xc3},       // 0x04 ret
	)
	pointerTailCall = cat(
		[]byte{0xff, 0xe0}, // 0x00 jmp *%rax
		[]byte{0xcc},       // 0x02 int3
	)
)

func TestExitSitesSynthetic(t *testing.T) {
	tests := []struct {
		name string
		code []byte
		copy []Range
		want []uint64
	}{
		{"both arms join", diamond, []Range{{0x00, 0x0e}}, []uint64{0x0e}},
		{"range ends mid-block and comes back", diamond, []Range{{0x04, 0x06}, {0x08, 0x0a}}, []uint64{0x0a}},
		{"ret in the copy", diamond, []Range{{0x0e, 0x12}}, []uint64{0x11}},
		{"branch out both ways", diamond, []Range{{0x02, 0x04}}, []uint64{0x04, 0x0c}},
		{"one arm", diamond, []Range{{0x0c, 0x0e}}, []uint64{0x0e}},
		{"tail calls", tailCalls, []Range{{0x00, 0x0d}}, []uint64{0x02, 0x08}},
		{"latch back edge", latchLoop, []Range{{0x04, 0x08}}, []uint64{0x02, 0x08}},
		{"loop body without its latch", latchLoop, []Range{{0x02, 0x04}}, []uint64{0x04}},
		{"jump table", jumpTable, []Range{{0x00, 0x02}}, []uint64{0x02}},
		{"loop with two entries", twoEntryLoop, []Range{{0x04, 0x08}}, []uint64{0x08}},
		{"tail call through a pointer", pointerTailCall, []Range{{0x00, 0x02}}, []uint64{0x00}},
		{"empty ranges are ignored", diamond, []Range{{0x0e, 0x0e}, {0x0e, 0x12}}, []uint64{0x11}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := exitSites(mustFunction(t, tt.code), tt.copy)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestExitsShared checks which exit sites can be reached without running
// the copy's entry since the function was called or the copy last left.
func TestExitsShared(t *testing.T) {
	tests := []struct {
		name  string
		code  []byte
		copy  []Range
		entry uint64
		want  []exit
	}{
		{"both arms join", diamond, []Range{{0x00, 0x0e}}, 0x00, []exit{{Addr: 0x0e, Shared: false}}},
		{"one arm", diamond, []Range{{0x0c, 0x0e}}, 0x0c, []exit{{Addr: 0x0e, Shared: true}}},
		{"the other arm, left by its jump", diamond, []Range{{0x04, 0x0a}}, 0x04, []exit{{Addr: 0x0a, Shared: false}}},
		{"ret in the copy", diamond, []Range{{0x0e, 0x12}}, 0x0e, []exit{{Addr: 0x11, Shared: false}}},
		{"range ends mid-block and comes back", diamond, []Range{{0x04, 0x06}, {0x08, 0x0a}}, 0x04, []exit{{Addr: 0x0a, Shared: false}}},
		{"entry in the range after the first", diamond, []Range{{0x04, 0x06}, {0x08, 0x0a}}, 0x08, []exit{{Addr: 0x0a, Shared: false}}},
		{"branch out both ways", diamond, []Range{{0x02, 0x04}}, 0x02, []exit{{Addr: 0x04, Shared: false}, {Addr: 0x0c, Shared: false}}},
		{"branch out both ways, entered on the test", diamond, []Range{{0x00, 0x04}}, 0x00, []exit{{Addr: 0x04, Shared: false}, {Addr: 0x0c, Shared: false}}},
		{"entry not run on every path", diamond, []Range{{0x00, 0x0e}}, 0x0c, []exit{{Addr: 0x0e, Shared: true}}},
		{"loop with two entries", twoEntryLoop, []Range{{0x04, 0x08}}, 0x04, []exit{{Addr: 0x08, Shared: true}}},
		{"latch back edge", latchLoop, []Range{{0x04, 0x08}}, 0x04, []exit{{Addr: 0x02, Shared: true}, {Addr: 0x08, Shared: false}}},
		{"padding before a loop", paddedLoop, []Range{{0x00, 0x02}, {0x03, 0x07}}, 0x00, []exit{{Addr: 0x07, Shared: false}}},
		// A marker the code does not hold begins no call (InlineCalls
		// reports it as a doubt).
		{"entry outside the code", diamond, []Range{{0x00, 0x0e}}, 0x100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := exits(mustFunction(t, tt.code), tt.copy, tt.entry)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestGraphLockPrefix(t *testing.T) {
	f := mustFunction(t, cat(
		[]byte{0x74, 0x01},             // 0x0 je 0x3: past the lock
		[]byte{0xf0, 0x48, 0xff, 0x0f}, // 0x2 lock decq (%rdi)
		[]byte{0xc3},                   // 0x6 ret
	))
	b2, _ := f.Block(0x2)
	if got := f.Blocks[0].Succs; len(got) != 1 || got[0] != b2 {
		t.Errorf("successors of the je: %v, want the block of the lock decq", got)
	}
	if err := f.CheckOffset(3); err == nil {
		t.Error("CheckOffset(3) = nil, want an error: the kernel sees lock decq")
	}
}

func TestExitSitesErrors(t *testing.T) {
	f := mustFunction(t, diamond)
	for _, tt := range []struct {
		copy []Range
		want string
	}{
		{[]Range{{0x10, 0x11}}, "amd64: range [0x10,0x11): 0x10 is not an instruction boundary"},
		{[]Range{{0x04, 0x20}}, "amd64: range [0x4,0x20) is not inside the function at 0x0 or a part of it"},
		{[]Range{{0x20, 0x24}}, "amd64: range [0x20,0x24) is not inside the function at 0x0 or a part of it"},
		{[]Range{{0x04, 0x07}}, "amd64: range [0x4,0x7): 0x7 is not an instruction boundary"},
	} {
		if _, err := exitSites(f, tt.copy); err == nil || err.Error() != tt.want {
			t.Errorf("ExitSites(%v) = %v, want %s", tt.copy, err, tt.want)
		}
	}
}

func TestCompatExitSitesSynthetic(t *testing.T) {
	f := mustFunction(t, diamond)
	tests := []struct {
		copy []Range
		want []uint64
	}{
		// Not last: the first instruction after; last: the last inside.
		{[]Range{{0x04, 0x06}, {0x08, 0x0a}}, []uint64{0x06, 0x08}},
		// Ends at the end of the function: the last inside, even when
		// not the last range.
		{[]Range{{0x0e, 0x12}, {0x00, 0x02}}, []uint64{0x11, 0x00}},
		{[]Range{{0x00, 0x0e}}, []uint64{0x0c}},
	}
	for _, tt := range tests {
		got, err := f.CompatExitSites(tt.copy)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("CompatExitSites(%v) (-want +got):\n%s", tt.copy, diff)
		}
	}
	if _, err := f.CompatExitSites([]Range{{0x00, 0x07}}); err == nil {
		t.Error("no error for a range that ends inside an instruction")
	}
}

func TestRefused(t *testing.T) {
	f := mustFunction(t, cat(
		[]byte{0x9d},             // 0x0 popf
		[]byte{0xfb},             // 0x1 sti
		[]byte{0x67, 0xe3, 0x00}, // 0x2 jecxz 0x5
		[]byte{0xe3, 0x00},       // 0x5 jrcxz 0x7
		[]byte{0x90},             // 0x7 nop
		[]byte{0xc3},             // 0x8 ret
	))
	for _, tt := range []struct {
		addr uint64
		want string
	}{
		{0x0, "kinst does not probe popf (at 0x0)"},
		{0x1, "kinst does not probe sti (at 0x1)"},
		{0x2, "kinst refuses jrcxz (at 0x2), and with it every probe in the function"},
		{0x5, "kinst refuses jrcxz (at 0x5), and with it every probe in the function"},
		{0x6, "amd64: no instruction starts at 0x6"},
		{0x7, ""},
		{0x8, ""},
	} {
		got := ""
		if err := f.Refused(tt.addr); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Refused(%#x) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

// noReturnCall is do_sendfile's shape in Debian's 6.1 vmlinux: the code
// after a call to a function that never returns (__stack_chk_fail) is
// another path's, which jumps back to before the copy.
var noReturnCall = cat(
	[]byte{0x85, 0xff},                   // 0x00 test %edi,%edi
	[]byte{0x75, 0x0c},                   // 0x02 jne 0x10
	[]byte{0xff, 0xc0},                   // 0x04 inc %eax       the copy
	[]byte{0x85, 0xf6},                   // 0x06 test %esi,%esi
	[]byte{0x75, 0x01},                   // 0x08 jne 0x0b
	[]byte{0xc3},                         // 0x0a ret
	[]byte{0xe8, 0xf0, 0x0f, 0x00, 0x00}, // 0x0b call 0x1000   never returns
	[]byte{0xeb, 0xf2},                   // 0x10 jmp 0x04
)

func TestExitSitesNoReturn(t *testing.T) {
	tests := []struct {
		name     string
		noReturn func(uint64) bool
		want     []uint64
	}{
		// Falling through the call makes a cycle through the copy,
		// entered at 0x04 and at 0x10: its retreating edge 0x10→0x04
		// counts as a back edge, so the exit is found either way; only
		// the call's block differs.
		{"call taken to return", nil, []uint64{0x06}},
		{"call known not to return", func(a uint64) bool { return a == 0x1000 }, []uint64{0x06}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFunctionNoReturn(noReturnCall, 0, tt.noReturn)
			if err != nil {
				t.Fatal(err)
			}
			got, err := exitSites(f, []Range{{0x04, 0x06}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if b, _ := f.Block(0x0b); (tt.noReturn != nil) != (len(b.Succs) == 0) {
				t.Errorf("block at 0x0b has successors %d", len(b.Succs))
			}
		})
	}
}

func TestProbeAt(t *testing.T) {
	code := []byte{
		0x31, 0xc9, // 0x00 xor %ecx,%ecx
		0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x02 cs nopw 0x0(%rax,%rax,1)
		0x0f, 0x1f, 0x40, 0x00, // 0x0c nopl 0x0(%rax)
		0x83, 0xe9, 0x01, // 0x10 sub $0x1,%ecx (loop head)
		0x75, 0xfb, // 0x13 jne 0x10
		0x74, 0x0a, // 0x15 je 0x21
		0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, // 0x17 cs nopw, alone in its block
		0xc3, // 0x21 ret
	}
	f := mustFunction(t, code)
	for _, tt := range []struct{ addr, want uint64 }{
		{0x00, 0x00}, // nothing to move
		{0x02, 0x0c}, // the next instruction of the block
		{0x17, 0x17}, // no other instruction runs exactly when it does
	} {
		if got := f.ProbeAt(tt.addr); got != tt.want {
			t.Errorf("ProbeAt(%#x) = %#x, want %#x", tt.addr, got, tt.want)
		}
	}
}
