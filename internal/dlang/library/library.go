package library

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unsafe"
)

// A File is a D library file.
type File struct {
	// Name names the file in errors and positions: the base name of an
	// embedded file ("errno.d"), the path of one read from a directory.
	// Libraries depend on each other by base name.
	Name string
	// Text is the file's text. An embedded file's is the binary's own
	// read-only memory, which must not be written.
	Text []byte

	facts *libFacts // an embedded file's, worked out beforehand
}

// SystemDir is the directory of the system's D libraries on FreeBSD,
// dtrace's default syslibdir.
const SystemDir = "/usr/lib/dtrace"

// Files returns the D library files built into kdtrace for the
// operating system goos, sorted by name. Only Linux has them; FreeBSD's
// come with the system, in SystemDir.
//
// The files are not copied: most programs compile two of them, and read
// the others not at all, since what each defines is known beforehand
// (zfacts.go).
func Files(goos string) []File {
	if goos != "linux" {
		return nil
	}
	files := make([]File, len(embeddedFiles))
	for i := range embeddedFiles {
		e := &embeddedFiles[i]
		files[i] = File{Name: path.Base(e.name), Text: unsafe.Slice(unsafe.StringData(*e.text), len(*e.text)), facts: &e.facts}
	}
	return files
}

// ReadDir returns the D library files in dir, as -L and -x libdir name
// them: every regular file whose name ends in ".d", in name order.
func ReadDir(dir string) ([]File, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []File
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".d") {
			continue
		}
		name := filepath.Join(dir, e.Name())
		fi, err := os.Stat(name) // follows a symbolic link
		if err != nil {
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		text, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: name, Text: text})
	}
	return files, nil
}

// System returns the system library of goos: the embedded files on
// Linux, the files of SystemDir elsewhere. A missing SystemDir holds no
// libraries, as dtrace skips a library directory it cannot open.
func System(goos string) ([]File, error) {
	if goos == "linux" {
		return Files(goos), nil
	}
	files, err := ReadDir(SystemDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return files, err
}
