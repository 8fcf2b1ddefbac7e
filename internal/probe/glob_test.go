package probe

import "testing"

func TestGlob(t *testing.T) {
	tests := []struct {
		s, p string
		want bool
	}{
		{"vfs_read", "vfs_read", true},
		{"vfs_read", "vfs_*", true},
		{"vfs_read", "*read", true},
		{"vfs_read", "*", true},
		{"", "*", true},
		{"", "", true},
		{"a", "", false},
		{"vfs_read", "vfs_?ead", true},
		{"vfs_read", "vfs_??ead", false},
		{"vfs_read", "vfs_[rw]ead", true},
		{"vfs_write", "vfs_[rw]*", true},
		{"vfs_open", "vfs_[rw]*", false},
		{"vfs_open", "vfs_[!rw]*", true},
		{"vfs_read", "vfs_[!rw]*", false},
		{"b", "[a-c]", true},
		{"d", "[a-c]", false},
		{"d", "[!a-c]", true},
		{"b", "[!a-c]", false},
		{"-", "[a-]", true}, // a trailing '-' is literal
		{"-", "[-a]", true}, // so is a leading one
		{"]", "[]]", true},  // a ']' first in a set is a member
		{"x", "[x", false},  // an unterminated set matches nothing
		{"*", `\*`, true},
		{"a", `\*`, false},
		{"a*b", `a\*b`, true},
		{"ab", `a\`, false}, // a trailing backslash matches nothing
		{"abc", "a**c", true},
		{"tick-1sec", "tick-*", true},
		{"profile-97", "tick-*", false},
		{"lwp_create", "?lwp?", false},
		{"_lwp_", "?lwp?", true},
		{"aaaaaaaaaa", "*a*a*a*a*a*a*a*a*a*a", false}, // stars nested past the kernel's depth
		{"aaaaaaaa", "*a*a*a*a*a*a*a*a", true},
	}
	for _, tt := range tests {
		if got := Glob(tt.s, tt.p); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tt.s, tt.p, got, tt.want)
		}
	}
}

func TestPattern(t *testing.T) {
	tests := []struct {
		field   string
		s       string
		want    bool
		literal bool
	}{
		{"", "anything", true, false},
		{"read", "read", true, true},
		{"read", "readv", false, true},
		{"read*", "readv", true, false},
		{"a[b", "a[b", false, false}, // a glob, though a malformed one
	}
	for _, tt := range tests {
		p := NewPattern(tt.field)
		if got := p.Match(tt.s); got != tt.want {
			t.Errorf("NewPattern(%q).Match(%q) = %v, want %v", tt.field, tt.s, got, tt.want)
		}
		if _, lit := p.Literal(); lit != tt.literal {
			t.Errorf("NewPattern(%q).Literal() literal = %v, want %v", tt.field, lit, tt.literal)
		}
	}
}
