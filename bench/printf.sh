#!/bin/sh
# bench/printf.sh: the rate at which each tracer writes a printf() line
# for every system call, under load, with a large buffer, kdtrace's and
# bpftrace's in the same run (apt-get install bpftrace), as root:
#
#   kdtrace -x bufsize=64m -q -n 'syscall:::entry { printf("%d %s\n", pid, execname); }'
#   BPFTRACE_PERF_RB_PAGES=16384 bpftrace -e 'tracepoint:raw_syscalls:sys_enter { printf("%d %s\n", pid, comm); }'
#
# bufsize is each CPU's, as is bpftrace's perf ring of 16384 pages: 64
# MiB. Meanwhile a dd(1) copies one byte at a time, two system calls a
# byte, more than either tracer prints. Each tracer writes to a file for
# SECONDS seconds from its first line, and is then stopped with SIGINT.
# For each run: the lines it wrote (those of the format, not bpftrace's
# "Attaching 1 probe..."), the lines a second, the firings it reported
# dropped (kdtrace's "N drops on CPU n", bpftrace's "Lost N events"),
# the CPU seconds it used a second, and the system calls dd made a
# second. The tracers take turns, ROUNDS times (3); the last lines are
# the medians of each column. kdtrace reads the buffers once a
# switchrate (1 Hz), as dtrace does: a firing takes 288 bytes of the
# ring (its header, pid, execname's 256 bytes, the ring's own 16), so
# that a round holds at most 466,000 firings of 64 MiB × 2 CPUs; those
# beyond are dropped and reported, and the lines come in steps of
# that. With BASE set to a git revision, kdtrace built from it takes
# its turn too, as "base": a change's before and after in one run.
#
#	[ROUNDS=n] [BASE=rev] sh bench/printf.sh [seconds]
set -eu
secs=${1:-5}
rounds=${ROUNDS:-3}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kdtrace" ./cmd/kdtrace
if [ -n "${BASE:-}" ]; then
	mkdir "$tmp/src-base"
	git archive "$BASE" | tar -x -C "$tmp/src-base"
	(cd "$tmp/src-base" && go build -o "$tmp/kdtrace-base" ./cmd/kdtrace)
fi
hz=$(getconf CLK_TCK)

# cputime PID: the process's user and system time, in clock ticks.
cputime() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# run NAME CMD…: one run of a tracer; appends its figures to $tmp/NAME.res.
run() {
	name=$1
	shift
	dd if=/dev/zero of=/dev/null bs=1 2>"$tmp/dd" &
	load=$!
	"$@" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	# The window starts at the first line: both tracers take a while
	# to attach.
	while [ ! -s "$tmp/out" ] && kill -0 $pid 2>/dev/null; do
		sleep 0.01
	done
	t0=$(date +%s%N)
	c0=$(cputime $pid)
	kill -USR1 $load 2>/dev/null || true
	sleep "$secs"
	t1=$(date +%s%N)
	c1=$(cputime $pid)
	kill -USR1 $load 2>/dev/null || true
	sleep 0.1
	kill -INT $pid 2>/dev/null || true
	wait $pid || true
	# A background job of sh ignores SIGINT.
	kill $load 2>/dev/null || true
	wait $load 2>/dev/null || true
	lines=$(grep -cE '^[0-9]+ ' "$tmp/out" || true)
	drops=$(awk '/drops on CPU/ { n += $2 } /Lost [0-9]+ events/ { for (i = 1; i < NF; i++) if ($i == "Lost") n += $(i+1) } END { print n + 0 }' "$tmp/err")
	# dd's records in, at the window's start and end (SIGUSR1 prints
	# them): a record is a read and a write.
	calls=$(awk '/records in/ { split($1, a, "+"); n[++i] = a[1] } END { print i < 2 ? 0 : 2 * (n[2] - n[1]) }' "$tmp/dd")
	awk -v name="$name" -v lines="$lines" -v drops="$drops" -v ns=$((t1 - t0)) -v cpu=$((c1 - c0)) -v hz="$hz" -v calls="$calls" 'BEGIN {
		s = ns / 1e9
		printf "%-10s %10d %12.0f %10d %8.2f %12.0f\n", name, lines, lines / s, drops, cpu / hz / s, calls / s
	}' | tee -a "$tmp/$name.res"
}

# median NAME: the median of each column of NAME's runs.
median() {
	awk -v name="$1" '{ for (i = 2; i <= NF; i++) v[i, NR] = $i; nf = NF } END {
		printf "%-10s", name " med"
		for (i = 2; i <= nf; i++) {
			n = 0
			for (r = 1; r <= NR; r++) a[++n] = v[i, r]
			for (x = 1; x <= n; x++) for (y = x + 1; y <= n; y++) if (a[y] < a[x]) { t = a[x]; a[x] = a[y]; a[y] = t }
			m = n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
			printf i == 2 ? " %10d" : i == 3 ? " %12.0f" : i == 4 ? " %10d" : i == 5 ? " %8.2f" : " %12.0f", m
		}
		printf "\n"
	}' "$tmp/$1.res"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, ${secs} s each, $rounds rounds"
printf '%-10s %10s %12s %10s %8s %12s\n' tracer lines lines/s drops "CPU/s" "dd calls/s"
i=0
while [ $i -lt "$rounds" ]; do
	if [ -n "${BASE:-}" ]; then
		run base "$tmp/kdtrace-base" -x bufsize=64m -q -n 'syscall:::entry { printf("%d %s\n", pid, execname); }'
	fi
	run kdtrace "$tmp/kdtrace" -x bufsize=64m -q -n 'syscall:::entry { printf("%d %s\n", pid, execname); }'
	if command -v bpftrace >/dev/null; then
		run bpftrace env BPFTRACE_PERF_RB_PAGES=16384 bpftrace -e 'tracepoint:raw_syscalls:sys_enter { printf("%d %s\n", pid, comm); }'
	fi
	i=$((i + 1))
done
[ -s "$tmp/base.res" ] && median base
median kdtrace
[ -s "$tmp/bpftrace.res" ] && median bpftrace
exit 0
