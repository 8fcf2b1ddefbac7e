// Package version says which kdtrace this is: its own version, and the
// commit it was built from when the build recorded one. dtrace's -V
// names only the D language version, which says nothing of the build.
package version

import (
	"runtime/debug"
)

// Version is kdtrace's own version, raised at each release.
const Version = "0.1.0-dev"

// commit is the commit the binary was built from, for builds where the
// go command records no VCS state (-buildvcs=false, go run):
//
//	go build -ldflags "-X github.com/kdtrace/kdtrace/internal/version.commit=$(git rev-parse HEAD)" ./cmd/kdtrace
var commit string

// Commit returns the commit the binary was built from, and whether the
// tree it was built from had changes: the linker's -X value when given,
// else the go command's vcs.revision and vcs.modified. An empty
// revision means the build did not say.
func Commit() (revision string, modified bool) {
	if commit != "" {
		return commit, false
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	return fromSettings(info.Settings)
}

// fromSettings reads the VCS state from a binary's build settings.
func fromSettings(settings []debug.BuildSetting) (revision string, modified bool) {
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return revision, modified
}

// String is kdtrace's version and commit as --version prints them:
// "kdtrace 0.1.0-dev, commit 0123…" with "(modified)" after a commit
// whose tree had changes, and "commit unknown" when the build recorded
// none.
func String() string {
	rev, modified := Commit()
	return format(rev, modified)
}

func format(revision string, modified bool) string {
	switch {
	case revision == "":
		revision = "unknown"
	case modified:
		revision += " (modified)"
	}
	return "kdtrace " + Version + ", commit " + revision
}
