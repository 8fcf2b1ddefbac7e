#!/bin/sh
# bench/compile.sh: the wall time of `kdtrace -e` (full compilation to
# DOF) on every tst.*.d of the DTrace test suite that compiles, with $1
# a process id when the test has a helper (this shell's), and -C for the
# scripts that use the preprocessor. bench/walltime runs each script 5
# times after a warm-up and prints the distribution of the medians. For
# scale, the same harness times a Go program that does nothing and
# `kdtrace -V`, the floor of any Go command and of kdtrace's own start.
#
#	sh bench/compile.sh [corpus-dir] [-v]
set -eu
cd "$(dirname "$0")/.."
corpus=${1:-../shared/corpus/dtrace-tst/tst/common}
verbose=${2:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Built as the README installs it: without cgo, static.
CGO_ENABLED=0 go build -o "$tmp/kdtrace" ./cmd/kdtrace
go build -o "$tmp/walltime" ./bench/walltime
mkdir "$tmp/nothing"
printf 'package main\n\nfunc main() {}\n' > "$tmp/nothing/main.go"
(cd "$tmp/nothing" && go mod init nothing >/dev/null 2>&1 && go build -o "$tmp/empty" .)

tab=$(printf '\t')
for f in $(find "$corpus" -name 'tst.*.d' | sort); do
	# -C only for the scripts that use the preprocessor: running cpp
	# costs a process of its own.
	cflag=""
	if grep -q '^[[:space:]]*#[[:space:]]*\(include\|define\|if\|undef\)' "$f"; then cflag="-C$tab"; fi
	arg=""
	base=${f%.d}
	if [ -e "$base.c" ] || [ -e "$base.exe" ]; then arg="$tab$$"; fi
	echo "$tmp/kdtrace$tab$cflag-e$tab-s$tab$f$arg"
done > "$tmp/commands"

echo "$tmp/empty" | "$tmp/walltime" -n 50 -label "empty Go program"
echo "$tmp/kdtrace$tab-V" | "$tmp/walltime" -n 50 -label "kdtrace -V"
"$tmp/walltime" $verbose -label "kdtrace -e, scripts that compile" < "$tmp/commands"
