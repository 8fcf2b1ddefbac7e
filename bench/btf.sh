#!/usr/bin/env bash
# Kernel BTF speed: opening /sys/kernel/btf/vmlinux and resolving
# struct task_struct, struct file, struct sk_buff and a chain of members,
# as BenchmarkOpenLookup in package btf does it. Prints the Go benchmark
# (warm: the process has done it before) and the median and best of N
# fresh processes doing it once (cold: what one kdtrace run pays).
#
#	bench/btf.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-21}
if [ ! -r /sys/kernel/btf/vmlinux ]; then
	echo "no /sys/kernel/btf/vmlinux: the running kernel has no BTF" >&2
	exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go test -c -o "$dir/btf.test" ./internal/btf

"$dir/btf.test" -test.run '^$' -test.bench '^BenchmarkOpenLookup$' -test.benchmem -test.count 5 | grep '^Benchmark'

for ((i = 0; i < n; i++)); do
	"$dir/btf.test" -test.run '^$' -test.bench '^BenchmarkOpenLookup$' -test.benchtime 1x |
		awk '/^Benchmark/ {print $3}'
done | sort -n | awk '{a[NR] = $1} END {printf "cold, %d processes: median %.2f ms, best %.2f ms\n", NR, a[int((NR+1)/2)] / 1e6, a[1] / 1e6}'
