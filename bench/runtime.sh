#!/bin/sh
# bench/runtime.sh: the runtime's figures, each beside bpftrace's in the
# same run (apt-get install bpftrace), as root:
#
#   1. start-up: `kdtrace -q -n 'BEGIN { exit(0); }'` against
#      `bpftrace -e 'BEGIN { exit(); }'`, the medians of 9 alternating
#      runs;
#   2. the cost a system call: a loop of 1,000,000 getppid calls bare,
#      under `syscall:::entry { @[execname] = count(); }` and under
#      bpftrace's `tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }`,
#      and the loop's count as each printed it at SIGINT;
#   3. the cost of a user probe hit: 100,000 calls of a function, bare,
#      under `pid$target:a.out:f:entry { @c = count(); }` and under
#      bpftrace's `uprobe:BIN:f { @c = count(); }`, with the counts;
#   4. 1,000 pid offset probes: the wall time of a run that attaches
#      them and exits in BEGIN;
#   5. the resident memory of each tracer in case 2 (max RSS).
#
#	sh bench/runtime.sh
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kdtrace" ./cmd/kdtrace
kd=$tmp/kdtrace
bt=$(command -v bpftrace || true)
[ -n "$bt" ] || echo "bpftrace is not installed: its columns are left out" >&2

# now prints the time in nanoseconds.
now() { date +%s%N; }

# median prints the median of its arguments.
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "1. start-up, median of 9 (ms)"
kt=""; bts=""
for i in 1 2 3 4 5 6 7 8 9; do
	s=$(now); "$kd" -q -n 'BEGIN { exit(0); }' >/dev/null 2>&1; e=$(now); kt="$kt $(( (e - s) / 1000 ))"
	if [ -n "$bt" ]; then s=$(now); "$bt" -e 'BEGIN { exit(); }' >/dev/null 2>&1; e=$(now); bts="$bts $(( (e - s) / 1000 ))"; fi
done
k=$(median $kt)
printf '   kdtrace  %6.1f\n' "$(echo "$k / 1000" | bc -l)"
if [ -n "$bt" ]; then b=$(median $bts); printf '   bpftrace %6.1f  (kdtrace/bpftrace %.3f)\n' "$(echo "$b / 1000" | bc -l)" "$(echo "$k / $b" | bc -l)"; fi

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
cat > "$tmp/calls.c" <<'EOF'
#include <stdlib.h>
__attribute__((noinline)) int f(int i) { __asm__ volatile("" ::: "memory"); return i + 1; }
int main(int argc, char **argv) {
	long n = atol(argv[1]), t = 0;
	for (long i = 0; i < n; i++)
		t += f(i);
	return t == 0;
}
EOF
gcc -O2 -o "$tmp/loop" "$tmp/loop.c"
gcc -O2 -fno-pie -no-pie -o "$tmp/calls" "$tmp/calls.c"

# timed runs a command and prints its wall time in nanoseconds.
timed() { s=$(now); "$@" >/dev/null; e=$(now); echo $((e - s)); }

# traced starts a tracer (its output in $tmp/out, its max RSS in
# $tmp/rss), waits until it has attached, runs the command, stops the
# tracer with SIGINT and prints the command's wall time.
traced() {
	ready=$1; shift
	cmd=$1; shift
	/usr/bin/time -f %M -o "$tmp/rss" "$@" >"$tmp/out" 2>"$tmp/err" &
	tp=$!
	for i in $(seq 200); do grep -q "$ready" "$tmp/err" "$tmp/out" 2>/dev/null && break; sleep 0.05; done
	sleep 0.3
	d=$(timed sh -c "$cmd")
	tracer=$(pgrep -P $tp | head -1)
	kill -INT "$tracer"
	wait $tp || true
	echo "$d"
}

n=1000000
echo "2. a system call, ns a call ($n getppid)"
bare=$(timed "$tmp/loop" $n)
printf '   bare               %6.0f\n' "$(echo "$bare / $n" | bc -l)"
d=$(traced "matched" "$tmp/loop $n" "$kd" -n 'syscall:::entry { @[execname] = count(); }')
krss=$(cat "$tmp/rss")
kc=$(awk '$1 == "loop" { print $2 }' "$tmp/out")
printf '   kdtrace            %6.0f  (+%.0f; loop counted %s)\n' "$(echo "$d / $n" | bc -l)" "$(echo "($d - $bare) / $n" | bc -l)" "$kc"
if [ -n "$bt" ]; then
	d=$(traced "Attaching" "$tmp/loop $n" "$bt" -e 'tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }')
	brss=$(cat "$tmp/rss")
	bc_=$(awk '$1 == "@[loop]:" { print $2 }' "$tmp/out")
	printf '   bpftrace           %6.0f  (+%.0f; loop counted %s)\n' "$(echo "$d / $n" | bc -l)" "$(echo "($d - $bare) / $n" | bc -l)" "$bc_"
fi

n=100000
echo "3. a user probe hit, ns a call ($n calls of f)"
bare=$(timed "$tmp/calls" $n)
printf '   bare               %6.0f\n' "$(echo "$bare / $n" | bc -l)"
# The pid provider needs the process: it waits for a signal first.
cat > "$tmp/callsp.c" <<'EOF'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile sig_atomic_t go;
static void on(int s) { go = 1; }
__attribute__((noinline)) int f(int i) { __asm__ volatile("" ::: "memory"); return i + 1; }
int main(int argc, char **argv) {
	long n = atol(argv[1]), t = 0;
	struct timespec a, b;
	signal(SIGUSR1, on);
	while (!go) pause();
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		t += f(i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	fprintf(stderr, "%ld\n", (b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec);
	return t == 0;
}
EOF
gcc -O2 -fno-pie -no-pie -o "$tmp/callsp" "$tmp/callsp.c"
"$tmp/callsp" $n 2>"$tmp/t" & cp=$!
sleep 0.2
"$kd" -q -p $cp -n 'BEGIN { printf("go\n"); } pid$target:callsp:f:entry { @c = count(); } pid$target:callsp:main:return { exit(0); }' >"$tmp/out" 2>&1 &
kp=$!
for i in $(seq 200); do grep -q go "$tmp/out" && break; sleep 0.05; done
kill -USR1 $cp; wait $cp || true
sleep 0.5; kill -INT $kp 2>/dev/null || true; wait $kp || true
d=$(cat "$tmp/t")
printf '   kdtrace            %6.0f  (counted %s)\n' "$(echo "$d / $n" | bc -l)" "$(grep -o "[0-9][0-9]*" "$tmp/out" | tail -1)"
if [ -n "$bt" ]; then
	"$tmp/callsp" $n 2>"$tmp/t" & cp=$!
	"$bt" -e "uprobe:$tmp/callsp:f { @c = count(); }" >"$tmp/out" 2>&1 &
	bp=$!
	for i in $(seq 200); do grep -q Attaching "$tmp/out" && break; sleep 0.05; done
	sleep 0.3
	kill -USR1 $cp; wait $cp || true
	kill -INT $bp; wait $bp || true
	d=$(cat "$tmp/t")
	printf '   bpftrace           %6.0f  (counted %s)\n' "$(echo "$d / $n" | bc -l)" "$(awk '$1 == "@c:" { print $2 }' "$tmp/out")"
fi

echo "4. 1,000 pid offset probes: attach, BEGIN, detach (ms)"
{
	echo 'int big(int x) {'
	for i in $(seq 400); do echo "	x = x * $i + (x >> 3);"; done
	echo '	return x; }'
	echo '#include <unistd.h>'
	echo 'int main(int argc, char **argv) { pause(); return big(argc); }'
} > "$tmp/big.c"
gcc -O0 -fno-pie -no-pie -o "$tmp/big" "$tmp/big.c"
"$tmp/big" & bp=$!
sleep 0.2
nprobes=$("$kd" -l -p $bp -n 'pid$target:big:big:' 2>/dev/null | tail -n +2 | head -1000 | wc -l)
offs=$("$kd" -l -p $bp -n 'pid$target:big:big:' 2>/dev/null | tail -n +2 | head -1000 | awk '{ printf "pid$target:big:big:%s,", $NF }')
s=$(now)
"$kd" -q -p $bp -n "${offs%,} { } BEGIN { exit(0); }" >/dev/null 2>"$tmp/err" || cat "$tmp/err" >&2
e=$(now)
kill $bp; wait $bp 2>/dev/null || true
printf '   %d probes: %.0f ms\n' "$nprobes" "$(echo "($e - $s) / 1000000" | bc -l)"

echo "5. resident memory during case 2 (MB)"
printf '   kdtrace %.1f\n' "$(echo "$krss / 1024" | bc -l)"
[ -n "$bt" ] && printf '   bpftrace %.1f\n' "$(echo "$brss / 1024" | bc -l)"
exit 0
