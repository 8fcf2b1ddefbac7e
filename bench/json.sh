#!/bin/sh
# bench/json.sh: -O json on a trace of a known number of records, as
# root. A helper calls getppid(2) N times (default 1,000,000), and
#
#   kdtrace -O json -n 'syscall::getppid:entry /pid == $target/ { trace(++n); }' -c 'loop N'
#
# records each call, numbered: first at the default switchrate and
# bufsize (dtrace's: 1 Hz, 4 MiB), then with -x bufsize=64m, room for a
# second of calls. Each time the script counts the firings' lines with
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
#include <unistd.h>
int main(int argc, char **argv) {
	long n = atol(argv[1]);
	for (long i = 0; i < n; i++)
		getppid();
	return 0;
}
EOF
gcc -O2 -o "$tmp/loop" "$tmp/loop.c"

# trial traces the loop with the kdtrace options given, and checks and
# prints what kdtrace wrote.
trial() {
	s=$(date +%s%N)
	/usr/bin/time -f '%U %S %M' -o "$tmp/time" "$tmp/kdtrace" "$@" -O json \
		-n 'syscall::getppid:entry /pid == $target/ { trace(++n); }' -c "$tmp/loop $n" >"$tmp/out" 2>"$tmp/err"
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
	echo "-O json $*: $n getppid calls traced"
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

trial
trial -x bufsize=64m
