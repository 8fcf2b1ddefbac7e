package option

import (
	"errors"
	"testing"
)

func TestSet(t *testing.T) {
	tests := []struct {
		name, value string
		script      bool
		want        error
	}{
		{"quiet", "", true, nil},
		{"quiet", "please", true, ErrValue},
		{"quiet", "YES", true, nil},
		{"flowindent", "on", true, nil},
		{"bufsize", "4m", false, nil},
		{"specsize", "1b", true, ErrValue},
		{"specsize", "-40", true, ErrValue},
		{"nspec", "245566729809009887663", true, ErrValue},
		{"bufpolicy", "ring", true, nil},
		{"bufpolicy", "circle", true, ErrValue},
		{"switchrate", "10hz", true, nil},
		{"switchrate", "10parsecs", true, ErrValue},
		{"setenv", "A=b", false, nil},
		{"setenv", "A=b", true, ErrContext},
		{"nosuchoption", "", false, ErrName},
	}
	var off Set
	off.Set("quiet", "")
	if off.SetFromScript("quiet", "UnSeT"); off.IsSet("quiet") {
		t.Error("quiet=unset left quiet set")
	}
	for _, tt := range tests {
		var s Set
		set := s.Set
		if tt.script {
			set = s.SetFromScript
		}
		if err := set(tt.name, tt.value); !errors.Is(err, tt.want) {
			t.Errorf("set(%q, %q) from script %v = %v, want %v", tt.name, tt.value, tt.script, err, tt.want)
		}
		if tt.want == nil && !s.IsSet(tt.name) {
			t.Errorf("%s not set", tt.name)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]uint64{"512": 512, "4k": 4096, "2m": 2 << 20, "1g": 1 << 30} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	if _, err := ParseSize("16x"); err == nil {
		t.Error("ParseSize(16x) accepted a bad unit")
	}
}
