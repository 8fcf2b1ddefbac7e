package fuzznest

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"BEGIN { x = 1; }", "BEGIN { x = 1; }"},
		{string(Input("x = ", "(", "1", ")", ";", 1)), "x = " + strings.Repeat("(", 128) + "1" + strings.Repeat(")", 128) + ";"},
		{"a\x00\x02-", "a" + strings.Repeat("-", 256)},
		{"a\x00\x01b\x00c", "a" + strings.Repeat("b", 128) + "c"},
		{"a\x00", "a\x00"},
		{"a\x00\x00b\x00c\x00d", "ac"},
		{"a\x00\x01b\x00c\x00d\x00e", "a" + strings.Repeat("b", 128) + "c" + strings.Repeat("d", 128) + "e"},
	}
	for _, tt := range tests {
		if got := string(Expand([]byte(tt.in))); got != tt.want {
			t.Errorf("Expand(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	if got := len(Expand(Input("", strings.Repeat("x", 1000), "", "", "", 255))); got > maxLen {
		t.Errorf("an expansion is %d bytes, more than %d", got, maxLen)
	}
}
