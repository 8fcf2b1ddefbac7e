package option

import (
	"errors"
	"testing"
	"time"
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
		{"setenv", "A=b", true, errContext},
		{"nosuchoption", "", false, errName},
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

// TestParseInterval checks rates as dt_opt_rate reads them: a frequency
// of 0, or one too high for a nanosecond, is no interval at all.
func TestParseInterval(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"10hz": 100 * time.Millisecond, "4": 250 * time.Millisecond, "5ms": 5 * time.Millisecond, "2s": 2 * time.Second,
		"0": 0, "0hz": 0, "0ms": 0, "2000000000hz": 0,
	} {
		if got, err := ParseInterval(in); err != nil || got != want {
			t.Errorf("ParseInterval(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1x", "hz"} {
		if _, err := ParseInterval(in); err == nil {
			t.Errorf("ParseInterval(%q) accepted it", in)
		}
	}
}

func TestRuntime(t *testing.T) {
	var s Set
	for _, o := range []Setting{{"cpp", ""}, {"quiet", ""}, {"define", "X=1"}, {"bufsize", "8m"}, {"switchrate", "10hz"}, {"oformat", "json"}, {"encoding", "utf8"}} {
		if err := s.Set(o.Name, o.Value); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Runtime()
	want := []Setting{{"bufsize", "8m"}, {"encoding", "utf8"}, {"oformat", "json"}, {"quiet", ""}, {"switchrate", "10hz"}}
	if len(got) != len(want) {
		t.Fatalf("Runtime() = %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("Runtime()[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}
