#!/bin/sh
# bench/progen.sh: TestInlineGenerated over many generated programs, as
# root: N programs (default 500) from seed SEED (default 1), each built
# by gcc and clang at -O1, -O2, -O3, -O2 -funroll-loops and -O2 -flto,
# their inline functions' pid entry and return probes counted against
# the programs' own counts. It prints the figures (exact, warned and
# wrong cases by compiler and flags) and the list of wrong cases; the
# whole log, with each wrong case's kdtrace -e -d rewrite, goes to
# KEEP/progen.log, and the programs with wrong cases are kept under KEEP
# (default /var/tmp/kdtrace-progen), to rerun as the log says.
#
# KDTRACE=/path/to/kdtrace traces with that binary instead of one built
# from this tree, to compare an older kdtrace with this one on the same
# programs (the test itself is still this tree's).
#
#	[KDTRACE=bin] [KEEP=dir] sh bench/progen.sh [N] [SEED]
set -eu
n=${1:-500}
seed=${2:-1}
keep=$(realpath -m "${KEEP:-/var/tmp/kdtrace-progen}")
cd "$(dirname "$0")/.."
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
mkdir -p "$keep"
set -- -progen.n="$n" -progen.seed="$seed" -progen.keep="$keep"
if [ -n "${KDTRACE:-}" ]; then
	set -- "$@" -progen.kdtrace="$(realpath "$KDTRACE")"
fi
status=0
go test ./cmd/kdtrace -run '^TestInlineGenerated$' -count=1 -timeout 0 "$@" >"$keep/progen.log" 2>&1 || status=$?
# The figures and the list of wrong cases are at the log's end.
sed -n '/programs from seed/,$p' "$keep/progen.log"
exit $status
