#!/bin/sh
# kinst-index.sh: time kdtrace's kinst inline index on Debian's kernel
# debug image, and compare its entry sites with perf probe's.
#
# Usage: bench/kinst-index.sh [N]
#
# Fetches the vmlinux of linux-image-amd64-dbg (only the vmlinux is
# extracted from the .deb, into $WORK, never into the repository),
# builds the whole index with an empty cache (first run), looks one
# function up from the cache (cached run), and reports wall time and
# peak RSS of each. If perf is installed, it then compares the entry
# sites of N (default 200) inlined functions chosen at random with those
# `perf probe -k VMLINUX -D FUNC` prints, timing both.
#
# The kdtrace command's first and cached runs on FUNC take turns with
# perf probe -D on it, RUNS times, and their medians and the first run's
# ratios to perf's are printed.
#
# Environment: WORK (default /var/tmp/kdtrace-vmlinux); VMLINUX to use a
# vmlinux already at hand; FUNC, the inlined function the kdtrace command
# and perf probe -D are timed on (default kmap_local_page); RUNS, how many
# turns each takes (default 3). Without it, the vmlinux the guest test caches
# (internal/guest's FetchDebug) is used when there.
set -eu

N=${1:-200}
WORK=${WORK:-/var/tmp/kdtrace-vmlinux}
cd "$(dirname "$0")/.."
mkdir -p "$WORK"

if [ -z "${VMLINUX:-}" ]; then
	VMLINUX=$(ls "$WORK"/usr/lib/debug/boot/vmlinux-* "${XDG_CACHE_HOME:-$HOME/.cache}"/kdtrace/guest/*/vmlinux-* 2>/dev/null | head -n 1 || true)
fi
if [ -z "$VMLINUX" ]; then
	pkg=$(apt-cache depends linux-image-amd64-dbg | awk '/Depends: linux-image-.*-dbg/ { print $2; exit }')
	release=${pkg#linux-image-}
	release=${release%-dbg}
	(cd "$WORK" && apt-get download "$pkg")
	# --occurrence stops tar at the file instead of reading 5 GB on.
	dpkg-deb --fsys-tarfile "$WORK/${pkg}"_*.deb |
		tar -x -C "$WORK" --occurrence=1 "./usr/lib/debug/boot/vmlinux-$release"
	VMLINUX=$WORK/usr/lib/debug/boot/vmlinux-$release
fi
echo "vmlinux: $VMLINUX ($(stat -c %s "$VMLINUX") bytes)"

BIN=$WORK/kinstindex
go build -o "$BIN" ./internal/debuginfo/internal/kinstindex
CACHE=$(mktemp -d)
OUT=$(mktemp -d)
trap 'rm -rf "$CACHE" "$OUT"' EXIT

# Time and peak RSS of a command, from GNU time.
measure() {
	label=$1
	shift
	/usr/bin/time -v "$@" >"$OUT/stdout" 2>"$OUT/time"
	wall=$(awk -F': ' '/Elapsed/ { print $2 }' "$OUT/time")
	rss=$(awk -F': ' '/Maximum resident/ { print $2 }' "$OUT/time")
	echo "$label: wall $wall, peak RSS $((rss / 1024)) MB"
}

cat "$VMLINUX" >/dev/null # the page cache is warm for every run
measure "first run (whole index)" "$BIN" -cache "$CACHE" "$VMLINUX"
grep '^kernel:' "$OUT/stdout"
measure "cached run (lookup of kmap_local_page)" "$BIN" -cache "$CACHE" -sites "$VMLINUX" kmap_local_page
echo "index cache: $(du -h "$CACHE"/*.idx | cut -f1)"

# The same through the kdtrace command, as a user runs it: first run with
# an empty cache, then cached, beside perf probe -D on the same function,
# taking turns RUNS times (default 3) so that a busy machine slows both
# alike; medians, and the first run's ratios to perf's. The first run
# indexes only the units that can hold the function (debuginfo's Lazy).
KD=$WORK/kdtrace
go build -o "$KD" ./cmd/kdtrace
FUNC=${FUNC:-kmap_local_page}
RUNS=${RUNS:-3}
# run LABEL CMD...: wall seconds and peak RSS in KB of one run, appended
# to $OUT/LABEL.
run() {
	label=$1
	shift
	/usr/bin/time -f '%e %M' -o "$OUT/time" "$@" >/dev/null 2>&1 || true
	cat "$OUT/time" >>"$OUT/$label"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for i in $(seq "$RUNS"); do
	KCACHE=$(mktemp -d)
	XDG_CACHE_HOME=$KCACHE run kdfirst "$KD" --kernel "$VMLINUX" -e -d -n "kinst::$FUNC:entry {}"
	XDG_CACHE_HOME=$KCACHE run kdcached "$KD" --kernel "$VMLINUX" -e -d -n "kinst::$FUNC:entry {}"
	rm -rf "$KCACHE"
	if command -v perf >/dev/null; then
		run perf perf probe -k "$VMLINUX" -D "$FUNC"
	fi
done
for label in kdfirst kdcached perf; do
	[ -s "$OUT/$label" ] || continue
	wall=$(cut -d' ' -f1 "$OUT/$label" | median)
	rss=$(cut -d' ' -f2 "$OUT/$label" | median)
	eval "${label}_wall=$wall ${label}_rss=$rss"
	case $label in
	kdfirst) what="kdtrace first run (-e -d -n kinst::$FUNC:entry)" ;;
	kdcached) what="kdtrace cached run (-e -d -n kinst::$FUNC:entry)" ;;
	perf) what="perf probe -k VMLINUX -D $FUNC" ;;
	esac
	echo "$what: median of $RUNS: wall $wall s, peak RSS $((rss / 1024)) MB"
done
if [ -s "$OUT/perf" ]; then
	echo "kdtrace first run / perf probe -D: wall $(echo "$kdfirst_wall $perf_wall" | awk '{ printf "%.2f", $1 / $2 }'), peak RSS $(echo "$kdfirst_rss $perf_rss" | awk '{ printf "%.2f", $1 / $2 }')"
fi

if ! command -v perf >/dev/null; then
	echo "perf not installed: no comparison with perf probe"
	exit 0
fi

"$BIN" -cache "$CACHE" -random "$N" "$VMLINUX" >"$OUT/funcs"
same=0
differ=0
outofline=0
perftime=0
ourtime=0
now() { date +%s%N; }
while read -r f; do
	t0=$(now)
	perf probe -k "$VMLINUX" -D "$f" 2>"$OUT/perf.err" |
		awk '{ print $2 }' | sort -u >"$OUT/perf.all" || true
	# perf also lists the out-of-line entries (f+0, f.part.0+0, ...),
	# which kdtrace turns into fbt probes instead.
	grep -Ev "^$f(\.[a-z]+\.[0-9]+)*\+0\$" "$OUT/perf.all" >"$OUT/perf" || true
	outofline=$((outofline + $(wc -l <"$OUT/perf.all") - $(wc -l <"$OUT/perf")))
	t1=$(now)
	"$BIN" -cache "$CACHE" -sites "$VMLINUX" "$f" | cut -f2 | sort -u >"$OUT/ours"
	t2=$(now)
	perftime=$((perftime + t1 - t0))
	ourtime=$((ourtime + t2 - t1))
	if cmp -s "$OUT/perf" "$OUT/ours"; then
		same=$((same + 1))
	else
		differ=$((differ + 1))
		echo "differs: $f: perf $(wc -l <"$OUT/perf") sites, kdtrace $(wc -l <"$OUT/ours") $(head -c 200 "$OUT/perf.err" | tr '\n' ' ')"
		diff "$OUT/perf" "$OUT/ours" | head -n 6 | sed 's/^/	/'
	fi
done <"$OUT/funcs"
echo "entry sites of $N inlined functions: $same agree with perf probe -D, $differ differ"
echo "($outofline out-of-line entries listed by perf left out: kdtrace uses fbt for them)"
echo "mean time per function: perf probe -D $((perftime / N / 1000000)) ms, kdtrace cached lookup $((ourtime / N / 1000000)) ms"
