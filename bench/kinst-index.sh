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
# Environment: WORK (default /var/tmp/kdtrace-vmlinux); VMLINUX to use a
# vmlinux already at hand; FUNC, the inlined function the kdtrace command
# and perf probe -D are timed on (default kmap_local_page). Without it, the vmlinux the guest test caches
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
# an empty cache, then cached, beside perf probe -D on the same function.
KD=$WORK/kdtrace
go build -o "$KD" ./cmd/kdtrace
KCACHE=$(mktemp -d)
trap 'rm -rf "$CACHE" "$OUT" "$KCACHE"' EXIT
FUNC=${FUNC:-kmap_local_page}
XDG_CACHE_HOME=$KCACHE measure "kdtrace first run (-e -d -n kinst::$FUNC:entry)" \
	"$KD" --kernel "$VMLINUX" -e -d -n "kinst::$FUNC:entry {}"
XDG_CACHE_HOME=$KCACHE measure "kdtrace cached run (-e -d -n kinst::$FUNC:entry)" \
	"$KD" --kernel "$VMLINUX" -e -d -n "kinst::$FUNC:entry {}"
if command -v perf >/dev/null; then
	measure "perf probe -k VMLINUX -D $FUNC" perf probe -k "$VMLINUX" -D "$FUNC"
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
