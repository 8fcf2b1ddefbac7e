#!/bin/sh
# bench/json.sh: -O json on a trace of a known number of records, as
# root. A helper calls getppid(2) N times (default 1,000,000), and
#
#   kdtrace -O json -n 'syscall::getppid:entry /pid == $target/ { trace(++n); }' -c 'loop N'
#
# records each call, numbered: first as fast as the loop goes (about a
# million a second) at the default switchrate and bufsize (dtrace's:
# 1 Hz, 4 MiB of each CPU's in a ring of 4 MiB × CPUs, about 100,000
# firings a CPU); then with -x bufsize=64m, room for a second of calls; then at the defaults again with the loop
# paced to 80,000 calls a second, which the buffer holds between two
# reads. Each time the script counts the firings' lines with
# jq, checks that their numbers are in 1 … N, once each, adds the drops
# kdtrace reported (its "drop" objects, and dtrace's "N drops on CPU M"
# on stderr, which must agree) and says whether every call is
# accounted for: written, or reported dropped; it fails when one is
# not. It prints the wall time, the rate, and kdtrace's CPU time and
# maximum RSS.
#
#	sh bench/json.sh [N]
set -eu
cd "$(dirname "$0")/.."
n=${1:-1000000}
command -v jq >/dev/null || { echo "bench/json.sh needs jq (apt-get install jq)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kdtrace" ./cmd/kdtrace
cat > "$tmp/loop.c" <<'EOF'
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
/* loop N [RATE]: N getppid calls, at most RATE a second when given. */
int main(int argc, char **argv) {
	long n = atol(argv[1]), rate = argc > 2 ? atol(argv[2]) : 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		getppid();
		if (rate > 0 && i % 1000 == 999) {
			/* Sleep until call i is due. */
			double due = (double)(i + 1) / rate, now;
			do {
				clock_gettime(CLOCK_MONOTONIC, &t);
				now = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
				if (now < due)
					usleep((useconds_t)((due - now) * 1e6));
			} while (now < due);
		}
	}
	return 0;
}
EOF
gcc -O2 -o "$tmp/loop" "$tmp/loop.c"

# trial traces the loop at the rate given (0: as fast as it goes) with
# the kdtrace options given, and checks and prints what kdtrace wrote.
trial() {
	rate=$1; shift
	s=$(date +%s%N)
	/usr/bin/time -f '%U %S %M' -o "$tmp/time" "$tmp/kdtrace" "$@" -O json \
		-n 'syscall::getppid:entry /pid == $target/ { trace(++n); }' -c "$tmp/loop $n $rate" >"$tmp/out" 2>"$tmp/err"
	e=$(date +%s%N)
	lines=$(wc -l <"$tmp/out")
	jq -r 'select(.type == "probe" and .probe.provider == "syscall") | .records[0].value' "$tmp/out" >"$tmp/values"
	records=$(wc -l <"$tmp/values")
	distinct=$(sort -n -u "$tmp/values" | wc -l)
	inrange=$(awk -v n="$n" '$1 >= 1 && $1 <= n' "$tmp/values" | wc -l)
	drops=$(jq -r 'select(.type == "drop" and .kind == "principal") | .count' "$tmp/out" | awk '{ s += $1 } END { print s + 0 }')
	errdrops=$(awk '/ drops? on CPU / { s += $2 } END { print s + 0 }' "$tmp/err")
	bad=$(jq -c 'select(.version != 1)' "$tmp/out" | wc -l)
	read -r user sys rss <"$tmp/time"
	ms=$(((e - s) / 1000000))
	pace="as fast as they go"
	[ "$rate" -eq 0 ] || pace="$rate a second"
	echo "-O json $*: $n getppid calls, $pace"
	echo "   lines written            $lines ($bad not of version 1)"
	echo "   firings written          $records: $distinct distinct, $inrange in 1..$n"
	echo "   drops reported           $drops as JSON, $errdrops on stderr"
	grep -v 'drops\{0,1\} on CPU\|matched\|has exited' "$tmp/err" | sed 's/^/   stderr: /' || true
	echo "   wall time                $ms ms, $((n * 1000 / (ms > 0 ? ms : 1))) calls/s"
	echo "   kdtrace                  user ${user} s, system ${sys} s, max RSS $((rss / 1024)) MiB"
	if [ "$inrange" -ne "$records" ] || [ "$distinct" -ne "$records" ] || [ $((records + drops)) -ne "$n" ] || [ "$drops" -ne "$errdrops" ]; then
		echo "   RECORDS UNACCOUNTED FOR: $records written + $drops dropped != $n" >&2
		return 1
	fi
	if [ "$drops" -eq 0 ]; then
		echo "   every record written, none lost"
	else
		echo "   every record written or reported dropped"
	fi
}

trial 0
trial 0 -x bufsize=64m
trial 80000
