package version

import (
	"runtime/debug"
	"testing"
)

func TestFromSettings(t *testing.T) {
	const rev = "d1d3d7f0c0ffee0123456789abcdef0123456789"
	for _, tc := range []struct {
		name     string
		settings []debug.BuildSetting
		want     string
	}{
		{"none", nil, "kdtrace " + Version + ", commit unknown"},
		{"buildvcs=false", []debug.BuildSetting{{Key: "-buildvcs", Value: "false"}, {Key: "GOOS", Value: "linux"}},
			"kdtrace " + Version + ", commit unknown"},
		{"clean", []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}},
			"kdtrace " + Version + ", commit " + rev},
		{"modified", []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}},
			"kdtrace " + Version + ", commit " + rev + " (modified)"},
	} {
		if got := format(fromSettings(tc.settings)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
