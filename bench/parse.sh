#!/usr/bin/env bash
# Whole-process parse speed: kdtrace -e -d -s on a generated 5,000-line D
# script beside gofmt on a Go file of the same shape and size, in the
# same run. Prints the median wall time of each over N runs.
#
#	bench/parse.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-21}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/kdtrace" ./cmd/kdtrace
go run ./bench/gensrc "$dir" 5000
wc -l "$dir/bench.d" "$dir/bench.go"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

time_runs() {
	for ((i = 0; i < n; i++)); do
		s=$(date +%s%N)
		"$@" >/dev/null
		e=$(date +%s%N)
		echo $(((e - s) / 1000))
	done | median
}

k=$(time_runs "$dir/kdtrace" -e -d -s "$dir/bench.d")
g=$(time_runs gofmt "$dir/bench.go")
echo "kdtrace -e -d -s bench.d: median ${k} us"
echo "gofmt bench.go:           median ${g} us"
awk -v k="$k" -v g="$g" 'BEGIN { printf "ratio kdtrace/gofmt: %.2f\n", k / g }'
