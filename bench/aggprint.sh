#!/bin/sh
# bench/aggprint.sh: printing an aggregation of 100,000 keys at exit,
# kdtrace beside bpftrace printing a map of 100,000 keys, in the same
# run (apt-get install bpftrace), as root.
#
# A helper program calls f(i) for i from 0 to n-1 once it is told to;
# each tracer counts the calls by argument, @[arg0] = count(), so both
# hold exactly n keys. Once the calls are made the tracer is stopped
# with SIGINT and prints its aggregation. For each tracer, the medians
# of the runs (alternating between the tracers):
#
#   print: from the SIGINT to the tracer's exit (reading the maps,
#          sorting, formatting, writing);
#   CPU:   the user and system time the tracer took meanwhile, which
#          the machine's other load inflates less than the wall time;
#   total: from starting the tracer to its exit;
#
# Each map is sized for the keys: bpftrace's holds n
# (BPFTRACE_MAP_KEYS_MAX), kdtrace's what aggsize bytes hold, 64 a key
# of this shape, room for n; both then have the same number of hash
# buckets, the next power of two.
#
# The keys and the calls its output counted (n each, else the run
# fails). KDTRACE names a kdtrace binary to measure instead of this
# tree's (an older build, to compare).
#
#	sh bench/aggprint.sh [runs] [n]
set -eu
runs=${1:-5}
n=${2:-100000}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'kill $hp 2>/dev/null || true; rm -rf "$tmp"' EXIT
hp=
kd=${KDTRACE:-}
if [ -z "$kd" ]; then
	go build -o "$tmp/kdtrace" ./cmd/kdtrace
	kd=$tmp/kdtrace
fi
bt=$(command -v bpftrace || true)
[ -n "$bt" ] || echo "bpftrace is not installed: its column is left out" >&2

cat > "$tmp/keys.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static volatile sig_atomic_t go;
static void on(int s) { go = 1; }
__attribute__((noinline)) long f(long i) { __asm__ volatile("" ::: "memory"); return i + 1; }
int main(int argc, char **argv) {
	long n = atol(argv[1]), t = 0;
	signal(SIGUSR1, on);
	printf("waiting\n");
	fflush(stdout);
	while (!go)
		pause();
	for (long i = 0; i < n; i++)
		t += f(i);
	printf("done %ld\n", t);
	fflush(stdout);
	for (;;)
		pause();
}
C
gcc -O2 -fno-pie -no-pie -o "$tmp/keys" "$tmp/keys.c"

# now prints the time in nanoseconds.
now() { date +%s%N; }

# median prints the median of its arguments.
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# waitfor waits until file $2 has a line matching $1.
waitfor() {
	for i in $(seq 600); do grep -q "$1" "$2" 2>/dev/null && return 0; sleep 0.02; done
	echo "aggprint: no \"$1\" in $2 after 12 s" >&2
	cat "$2" >&2
	return 1
}

# run traces one helper with the tracer $1 (kd or bt), and sets print
# and total (wall, ns), pcpu (the CPU time the tracer took after the
# SIGINT, ms: what the machine's other load does not inflate), and keys
# and calls (what its output counted).
run() {
	# Not the last run's lines: the shell may start a job after
	# waitfor first looks.
	rm -f "$tmp/helper" "$tmp/out"
	"$tmp/keys" "$n" >"$tmp/helper" & hp=$!
	waitfor waiting "$tmp/helper"
	s=$(now)
	case $1 in
	kd) /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$kd" -q -x aggsize=$((n * 64)) -p "$hp" -n 'BEGIN { printf("ready\n"); }
		pid$target:keys:f:entry { @[arg0] = count(); }' >"$tmp/out" 2>"$tmp/err" & tp=$! ;;
	bt) BPFTRACE_MAP_KEYS_MAX=$n /usr/bin/time -f '%U %S' -o "$tmp/cpu" "$bt" -e "BEGIN { printf(\"ready\n\"); }
		uprobe:$tmp/keys:f { @[arg0] = count(); }" >"$tmp/out" 2>"$tmp/err" & tp=$! ;;
	esac
	waitfor ready "$tmp/out"
	kill -USR1 "$hp"
	waitfor done "$tmp/helper"
	tracer=$(pgrep -P "$tp")
	before=$(awk -v hz="$hz" '{ print ($14 + $15) * 1000 / hz }' "/proc/$tracer/stat")
	t0=$(now)
	kill -INT "$tracer"
	wait "$tp"
	e=$(now)
	kill "$hp"; wait "$hp" 2>/dev/null || true; hp=
	print=$((e - t0)) total=$((e - s))
	pcpu=$(awk -v b="$before" '{ print ($1 + $2) * 1000 - b }' "$tmp/cpu")
	case $1 in
	kd) set -- $(awk 'NF == 2 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { k++; c += $2 } END { print k + 0, c + 0 }' "$tmp/out") ;;
	bt) set -- $(awk '/^@\[[0-9]+\]: [0-9]+$/ { k++; c += $2 } END { print k + 0, c + 0 }' "$tmp/out") ;;
	esac
	keys=$1 calls=$2
	if [ "$keys" != "$n" ] || [ "$calls" != "$n" ]; then
		echo "aggprint: the output counted $keys keys and $calls calls, not $n" >&2
		cat "$tmp/err" >&2
		exit 1
	fi
}

hz=$(getconf CLK_TCK)
kp=""; kt=""; kc=""; bp=""; btt=""; bc=""
for i in $(seq "$runs"); do
	run kd; kp="$kp $print"; kt="$kt $total"; kc="$kc $pcpu"
	if [ -n "$bt" ]; then run bt; bp="$bp $print"; btt="$btt $total"; bc="$bc $pcpu"; fi
done
ms() { echo "$1 / 1000000" | bc -l; }
echo "printing $n keys at exit ($n counted by each), median of $runs runs (ms):"
echo "            print      CPU    total  (print: SIGINT to exit; CPU: its user+system time)"
k=$(median $kp)
printf '   kdtrace  %8.1f %8.0f %8.1f\n' "$(ms "$k")" "$(median $kc)" "$(ms "$(median $kt)")"
if [ -n "$bt" ]; then
	b=$(median $bp)
	printf '   bpftrace %8.1f %8.0f %8.1f  (print kdtrace/bpftrace %.3f)\n' "$(ms "$b")" "$(median $bc)" "$(ms "$(median $btt)")" "$(echo "$k / $b" | bc -l)"
fi
