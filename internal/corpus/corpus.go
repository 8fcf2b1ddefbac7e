// Package corpus finds the conformance corpus the tests read: the DTrace
// test suite and FreeBSD's kinst inline tests, checked out in
// ../shared/corpus beside the repository (README.md says from where).
//
// The tests reach it through testdata/corpus, a symbolic link in the
// repository to ../../shared/corpus, and not by its path outside: go
// test's result cache rechecks only the files inside the module that a
// test opened or stat'ed, so a test that skipped for want of the corpus
// would be replayed from the cache, skipped, after the corpus appeared.
// Through the link, the corpus's appearance, and the change of any file
// a test reads in it, is a change of the test's inputs.
package corpus

import (
	"os"
	"path/filepath"
	"runtime"
)

// Path returns the path of elem within the corpus, through the link in
// the repository.
func Path(elem ...string) string {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	return filepath.Join(append([]string{root, "testdata", "corpus"}, elem...)...)
}

// DTraceTests returns the DTrace test suite's common tests, and whether
// they are there.
func DTraceTests() (string, bool) {
	dir := Path("dtrace-tst", "tst", "common")
	_, err := os.Stat(dir)
	return dir, err == nil
}
