// Package harness runs the tests of the DTrace test suite the way
// FreeBSD's harness (tools/dtest.sh) runs and judges them, with any
// dtrace(1)-compatible command as dtrace.
//
// A test is a file in one of the suite's folders: tst.X.d, run as
// "dtrace -C -s tst.X.d" in the test's folder, with the pid of the
// helper program tst.X.exe as its argument when the folder has one; or
// tst.X.ksh, run as "ksh tst.X.ksh DTRACE". It passes when its exit
// status is 0 and its standard output equals tst.X.d.out (or
// tst.X.ksh.out) byte for byte; an output that is itself a ksh script
// ("#!/…ksh" on its first line) must also run with status 0.
//
// The suite is read-only: a Runner copies each folder once and builds
// its helper programs there (cc -O0 -g, as the harness's Makefile),
// then copies that into a directory of its own for each test, and runs
// the test in that copy. Each test's processes are a process group of
// their own, killed when the test ends or times out.
package harness
