#!/bin/sh
# bench/locals.sh: the warm compile of a locals-> probe on Debian's
# kernel debug image, beside issue 25's goal (50 ms, 70 MB):
#
#   kdtrace --kernel VMLINUX -e -n 'kinst::vfs_read:5 { printf("%d\n", locals->count); }'
#
# Each kdtrace warms a cache directory of its own with a first run (so
# that revisions whose cache formats differ do not rebuild each
# other's); the figures are the medians of the wall time, of the CPU
# time (user and system: the wall time of a quiet machine, give or take
# what runs in parallel) and of the peak RSS of N warm runs (default 9),
# in turns. With a git revision,
# kdtrace built from it is measured in the same turns. bpftrace cannot
# read a function's locals: there is nothing of its to compare.
#
#	sh bench/locals.sh [git-revision]
#
# Environment: VMLINUX, the kernel debug image (default: the one the
# guest tests cache, internal/guest's FetchDebug); N.
set -eu
cd "$(dirname "$0")/.."
rev=${1:-}
N=${N:-9}
if [ -z "${VMLINUX:-}" ]; then
	VMLINUX=$(ls "${XDG_CACHE_HOME:-$HOME/.cache}"/kdtrace/guest/*/vmlinux-* 2>/dev/null | head -n 1 || true)
fi
if [ -z "$VMLINUX" ] || [ ! -f "$VMLINUX" ]; then
	echo "no kernel debug image: set VMLINUX" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kdtrace" ./cmd/kdtrace
tracers="kdtrace"
if [ -n "$rev" ]; then
	mkdir "$tmp/before"
	git archive "$rev" | tar -x -C "$tmp/before"
	(cd "$tmp/before" && go build -o "$tmp/kdtrace-before" ./cmd/kdtrace)
	tracers="$tracers kdtrace-before"
fi
prog='kinst::vfs_read:5 { printf("%d\n", locals->count); }'

# run TRACER runs one compile with the tracer's cache, appending its
# wall time (ms), CPU time (ms) and peak RSS (KB) to its files.
run() {
	t0=$(date +%s%N)
	XDG_CACHE_HOME=$tmp/cache.$1 /usr/bin/time -f '%M %U %S' -o "$tmp/time1" \
		"$tmp/$1" --kernel "$VMLINUX" -e -n "$prog" >/dev/null 2>"$tmp/err" </dev/null ||
		{ cat "$tmp/err" >&2; exit 1; }
	echo $(( ($(date +%s%N) - t0) / 1000000 )) >>"$tmp/$1.ms"
	read -r kb user sys <"$tmp/time1"
	echo "$kb" >>"$tmp/$1.kb"
	echo "$user $sys" | awk '{ printf "%d\n", ($1 + $2) * 1000 }' >>"$tmp/$1.cpu"
}

for tr in $tracers; do
	mkdir "$tmp/cache.$tr"
	run "$tr" # warms the cache
	: >"$tmp/$tr.ms"
	: >"$tmp/$tr.cpu"
	: >"$tmp/$tr.kb"
done
i=0
while [ "$i" -lt "$N" ]; do
	for tr in $tracers; do run "$tr"; done
	i=$((i + 1))
done
mid=$(( (N + 1) / 2 ))
echo "vmlinux: $VMLINUX; median of $N warm runs (goal: 50 ms, 70 MB)"
median() { sort -n "$1" | sed -n "${mid}p"; }
printf '%-15s %8s %8s %8s\n' "" wall cpu rss
for tr in $tracers; do
	printf '%-15s %5d ms %5d ms %5d MB\n' "$tr" "$(median "$tmp/$tr.ms")" "$(median "$tmp/$tr.cpu")" \
		"$(( $(median "$tmp/$tr.kb") / 1024 ))"
done
