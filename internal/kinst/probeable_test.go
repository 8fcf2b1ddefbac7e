package kinst

import (
	"testing"

	"github.com/kdtrace/kdtrace/internal/amd64"
)

// TestCheckProbeable checks offsets in the shape of a live kernel
// function's tail: the return thunk's jump patched into ret and int3s.
func TestCheckProbeable(t *testing.T) {
	code := []byte{
		0x0f, 0x1f, 0x44, 0x00, 0x00, // +0 ftrace NOP
		0x55,       // +5 push %rbp
		0x0f, 0x0b, // +6 ud2
		0x5d,                   // +8 pop %rbp
		0xc3,                   // +9 ret
		0xcc, 0xcc, 0xcc, 0xcc, // +10 int3 padding
	}
	fn, err := amd64.NewFunction(code, 0x1000)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		off  uint64
		want string
	}{
		{0, ""},
		{2, "offset 2 is inside the 5-byte ftrace NOP (nearest boundaries: 0 and 5)"},
		{5, ""},
		{6, "offset 6 is a trap (int3 or ud2), which the kernel does not probe"},
		{8, ""},
		{9, ""},
		{10, "offset 10 is a trap (int3 or ud2), which the kernel does not probe"},
		{13, "offset 13 is a trap (int3 or ud2), which the kernel does not probe"},
	}
	for _, tt := range tests {
		err := checkProbeable(fn, tt.off)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("checkProbeable(+%d) = %q, want %q", tt.off, got, tt.want)
		}
	}
}
