// Package cachedir opens a cache directory that kdtrace, running as
// root, can write without being turned against the files of others.
//
// A cache lives under $XDG_CACHE_HOME or $HOME, which are often another
// user's (sudo -E keeps them): whoever can change a directory on the
// path, or plant a symbolic link in it, could otherwise make root
// truncate or replace a file anywhere. So Open walks the path from / one
// directory at a time, never following a link it has not vetted, and
// checks each directory as OpenSSH's StrictModes checks a home: owned by
// the running user or root, and writable by no one else, unless sticky
// (as /tmp, where others cannot rename or remove what is not theirs).
// The cache directory itself must be the running user's and writable by
// no one else, sticky or not. A symbolic link on the way is followed
// only if its owner is the running user or root: it lies in a directory
// that passed the checks, so no one else could have made it. What is
// missing is created mode 0700, as the XDG base directory specification
// asks of a cache.
//
// The files are then reached through the directory's descriptor, never
// by path: opened with O_NOFOLLOW, read only when regular and the
// running user's, written to a new temporary file renamed into place.
// With the walk, this leaves no moment at which another user can
// redirect a read or a write.
package cachedir

import (
	"fmt"
	"time"
)

// Dir is an open cache directory that passed Open's checks.
type Dir struct {
	fd int
	// Path is the directory's path as given to Open, made absolute.
	Path string
}

// Stat is what Lstat tells of an entry.
type Stat struct {
	Regular    bool // a regular file, not a link or a directory
	Dir        bool // a directory, not a link to one
	Size       int64
	ModTime    time.Time
	AccessTime time.Time
}

// UnsafeError says why a directory on the way, or a file in it, is not
// to be trusted.
type UnsafeError struct {
	Path   string
	Reason string
}

func (e *UnsafeError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Reason) }
