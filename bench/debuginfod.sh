#!/bin/sh
# bench/debuginfod.sh: what fetching the kernel's debug image through
# debuginfod costs. elfutils' debuginfod (apt-get install debuginfod)
# serves the guest kernel's debug vmlinux (KDTRACE_VMLINUX, or the one
# the guest tests fetched into ~/.cache/kdtrace/guest) on a loopback
# port, and kdtrace compiles kinst::add_rchar:entry against a copy of
# that vmlinux stripped of its DWARF (objcopy --strip-debug, the same
# build-id):
#
#   1. cold: an empty debuginfod cache and an empty kdtrace cache: the
#      download, then the inline index built from it; elfutils'
#      debuginfod-find alone, into another empty cache, for comparison;
#   2. warm: both caches full, the server still up (nothing is asked of
#      it); then the debuginfod cache full and kdtrace's empty, the
#      index built again from the cached file.
#
# Each figure is the wall time of one run, with the bytes in the cache.
# elfutils' debuginfod listens on every interface, so the script runs
# in a network namespace of its own, with only a loopback (unshare -n).
#
#	sh bench/debuginfod.sh
set -eu
cd "$(dirname "$0")/.."
if [ -z "${KD_BENCH_NETNS:-}" ]; then
	exec unshare -n env KD_BENCH_NETNS=1 sh -c 'ip link set lo up && exec sh "$0" "$@"' "$0" "$@"
fi
vmlinux=${KDTRACE_VMLINUX:-$(ls "$HOME"/.cache/kdtrace/guest/*/vmlinux-* 2>/dev/null | head -1)}
[ -f "$vmlinux" ] || { echo "no guest debug vmlinux: run the guest tests first, or set KDTRACE_VMLINUX" >&2; exit 1; }
command -v debuginfod >/dev/null || { echo "no debuginfod (apt-get install debuginfod)" >&2; exit 1; }
tmp=$(mktemp -d)
pid=""
cleanup() {
	[ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
go build -o "$tmp/" ./cmd/kdtrace ./cmd/kdtrace-debuginfod # the helper makes the downloads
id=$(readelf -n "$vmlinux" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p' | head -1)
mkdir "$tmp/served"
ln -s "$vmlinux" "$tmp/served/vmlinux"
objcopy --strip-debug "$vmlinux" "$tmp/vmlinux"

# A free port: the first that nothing listens on, from a random start.
port=$(( 20000 + $$ % 20000 ))
while ss -Hltn "sport = :$port" | grep -q .; do port=$((port + 1)); done
debuginfod -p "$port" -d "$tmp/db.sqlite" -F -L --disable-source-scan -t 1 -g 0 "$tmp/served" >"$tmp/log" 2>&1 &
pid=$!
url=http://127.0.0.1:$port
# Ready when it answers 200 for the build-id; the body is not read
# (--max-filesize: debuginfod 0.188 answers HEAD with 400).
ready() { [ "$(curl -s -o /dev/null --max-filesize 1 -w '%{http_code}' "$url/buildid/$id/debuginfo")" = 200 ]; }
until ready; do
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/log" >&2; exit 1; }
	sleep 0.2
done

now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }
size() { du -sb "$1" | cut -f1; }

# kd runs kdtrace with the debuginfod cache $1 and kdtrace's cache $2.
kd() {
	DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$1 XDG_CACHE_HOME=$2 \
		"$tmp/kdtrace" --kernel "$tmp/vmlinux" -e -n 'kinst::add_rchar:entry' >/dev/null
}

echo "guest kernel $(basename "$vmlinux"), build-id $id"
echo "   unstripped $(size "$vmlinux") bytes, stripped copy $(size "$tmp/vmlinux") bytes"
echo "1. cold"
s=$(now); kd "$tmp/dcache" "$tmp/kcache"; e=$(now)
echo "   kdtrace, both caches empty:        $(ms "$s" "$e") ms, $(size "$tmp/dcache") bytes fetched"
if command -v debuginfod-find >/dev/null; then
	s=$(now); DEBUGINFOD_URLS=$url DEBUGINFOD_CACHE_PATH=$tmp/ecache debuginfod-find debuginfo "$id" >/dev/null; e=$(now)
	echo "   debuginfod-find (elfutils), alone: $(ms "$s" "$e") ms, $(size "$tmp/ecache") bytes fetched"
fi
echo "2. warm"
s=$(now); kd "$tmp/dcache" "$tmp/kcache"; e=$(now)
echo "   kdtrace, both caches full:         $(ms "$s" "$e") ms"
s=$(now); kd "$tmp/dcache" "$tmp/kcache2"; e=$(now)
echo "   kdtrace, index rebuilt:            $(ms "$s" "$e") ms"
