#!/bin/sh
# bench/compile.sh: the wall time of `kdtrace -e` (full compilation to
# DOF) on every tst.*.d of the DTrace test suite that compiles, with $1
# a process id when the test has a helper (this shell's), and -C for the
# scripts that use the preprocessor. Prints the distribution.
#
#	sh bench/compile.sh [corpus-dir]
set -eu
cd "$(dirname "$0")/.."
corpus=${1:-../shared/corpus/dtrace-tst/tst/common}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kdtrace" ./cmd/kdtrace
: > "$tmp/times"
n=0
for f in $(find "$corpus" -name 'tst.*.d' | sort); do
	arg=""
	# -C only for the scripts that use the preprocessor: running cpp
	# costs a process of its own.
	cflag=""
	if grep -q '^[[:space:]]*#[[:space:]]*\(include\|define\|if\|undef\)' "$f"; then cflag=-C; fi
	base=${f%.d}
	if [ -e "$base.c" ] || [ -e "$base.exe" ]; then arg=$$; fi
	# Only what compiles counts; the first run warms the page cache.
	"$tmp/kdtrace" $cflag -e -s "$f" $arg > /dev/null 2>&1 || continue
	s=$(date +%s%N)
	"$tmp/kdtrace" $cflag -e -s "$f" $arg > /dev/null 2>&1
	e=$(date +%s%N)
	echo $(( (e - s) / 1000 )) >> "$tmp/times"
	n=$((n + 1))
done
sort -n "$tmp/times" | awk -v n="$n" '{ t[NR] = $1 } END {
	printf "kdtrace -e over %d compiling scripts (ms): min %.2f  p10 %.2f  median %.2f  p90 %.2f  p99 %.2f  max %.2f\n",
		n, t[1] / 1000, t[int(NR * 0.1) + 1] / 1000, t[int((NR + 1) / 2)] / 1000,
		t[int(NR * 0.9)] / 1000, t[int(NR * 0.99)] / 1000, t[NR] / 1000
}'
