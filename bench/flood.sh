#!/bin/sh
# bench/flood.sh: the one-liner that traces every system call,
# kdtrace's own among them, beside bpftrace's raw_syscalls printf in the
# same run (apt-get install bpftrace), as root.
#
#   kdtrace -n 'syscall:::entry { trace(arg0); }' [options]
#   bpftrace -e 'tracepoint:raw_syscalls:sys_enter { printf("%d\n", args->id); }'
#
# Each tracer writes to a file for SECONDS seconds and is then stopped
# with SIGINT. For each: the lines it wrote, the drops it reported
# (kdtrace's "N drops on CPU n", bpftrace's "Lost N events"), its peak
# resident memory (VmHWM, sampled every 0.1 s) and the time from the
# SIGINT to its exit. Extra arguments are given to kdtrace (such as
# -x bufsize=4k, or -O json). With LOAD=1, a dd(1) copying one byte at a
# time runs meanwhile, two system calls a byte, so that both tracers
# see more calls than they can print; without it, most of the calls are
# the tracer's own.
#
#	[LOAD=1] sh bench/flood.sh [seconds] [kdtrace options…]
set -eu
secs=${1:-3}
[ $# -gt 0 ] && shift
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kdtrace" ./cmd/kdtrace

# run NAME CMD…: runs the tracer, then SIGINT after $secs seconds.
run() {
	name=$1
	shift
	load=
	if [ -n "${LOAD:-}" ]; then
		dd if=/dev/zero of=/dev/null bs=1 2>/dev/null &
		load=$!
	fi
	"$@" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	hwm=0
	end=$(($(date +%s%N) + secs * 1000000000))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		h=$(awk '/^VmHWM/ { print $2 }' /proc/$pid/status 2>/dev/null || echo 0)
		[ "${h:-0}" -gt "$hwm" ] && hwm=$h
		sleep 0.1
	done
	h=$(awk '/^VmHWM/ { print $2 }' /proc/$pid/status 2>/dev/null || echo 0)
	[ "${h:-0}" -gt "$hwm" ] && hwm=$h
	t0=$(date +%s%N)
	kill -INT $pid
	wait $pid || true
	t1=$(date +%s%N)
	[ -n "$load" ] && kill $load && wait $load 2>/dev/null || true
	lines=$(wc -l <"$tmp/out")
	drops=$(awk '/drops on CPU/ { n += $2 } /Lost [0-9]+ events/ { for (i = 1; i < NF; i++) if ($i == "Lost") n += $(i+1) } END { print n + 0 }' "$tmp/err")
	printf '%-10s %10d %10d %8.1f %10.3f\n' "$name" "$lines" "$drops" "$(echo "$hwm / 1024" | bc -l)" "$(echo "($t1 - $t0) / 1000000000" | bc -l)"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs, ${secs} s each"
printf '%-10s %10s %10s %8s %10s\n' tracer lines drops "peak MB" "SIGINT s"
run kdtrace "$tmp/kdtrace" -n 'syscall:::entry { trace(arg0); }' "$@"
if command -v bpftrace >/dev/null; then
	run bpftrace bpftrace -e 'tracepoint:raw_syscalls:sys_enter { printf("%d\n", args->id); }'
fi
