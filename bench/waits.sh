#!/bin/sh
# bench/waits.sh: the waits of everyday one-liners, each beside
# bpftrace's (apt-get install bpftrace) in the same run, as root:
#
#   exit:  kdtrace -q -n 'tick-500ms { exit(0); }'
#          bpftrace -e 'interval:ms:500 { exit(); }'
#          from start to exit: the clause calls exit() half a second
#          after the tracing starts, when the buffers have been read
#          once (a clause that does so before, kdtrace notices at
#          the first reading);
#   agg:   kdtrace -q -n 'BEGIN { @ = count(); exit(0); }'
#          bpftrace -e 'BEGIN { @ = count(); exit(); }'
#          a script of one aggregation, from start to exit;
#   check: kdtrace -e -n 'syscall::read:entry { @[execname] = count(); }'
#          compiling alone (bpftrace has no equivalent).
#
# Each figure is the median wall time of 9 runs, in turns. With a git
# revision, kdtrace built from it is measured in the same turns.
#
#	sh bench/waits.sh [git-revision]
set -euf
if ! grep -q ' /sys/kernel/tracing tracefs ' /proc/mounts && [ -z "${KD_BENCH_NS:-}" ]; then
	exec unshare -m env KD_BENCH_NS=1 sh -c 'mount -t tracefs nodev /sys/kernel/tracing && exec sh "$0" "$@"' "$0" "$@"
fi
cd "$(dirname "$0")/.."
rev=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kdtrace" ./cmd/kdtrace
tracers="kdtrace"
if [ -n "$rev" ]; then
	mkdir "$tmp/before"
	git archive "$rev" | tar -x -C "$tmp/before"
	(cd "$tmp/before" && go build -o "$tmp/kdtrace-before" ./cmd/kdtrace)
	tracers="$tracers kdtrace-before"
fi
command -v bpftrace >/dev/null && tracers="$tracers bpftrace"

# cmd TRACER CASE prints the command line of a case.
cmd() {
	case $1:$2 in
	bpftrace:exit) echo "bpftrace -e interval:ms:500{exit();}" ;;
	bpftrace:agg) echo "bpftrace -e BEGIN{@=count();exit();}" ;;
	bpftrace:check) ;;
	*:exit) echo "$tmp/$1 -q -n tick-500ms{exit(0);}" ;;
	*:agg) echo "$tmp/$1 -q -n BEGIN{@=count();exit(0);}" ;;
	*:check) echo "$tmp/$1 -e -n syscall::read:entry{@[execname]=count();}" ;;
	esac
}

now() { date +%s%N; }
for c in exit agg check; do
	for tr in $tracers; do : >"$tmp/$tr.$c"; done
	for _ in 1 2 3 4 5 6 7 8 9; do
		for tr in $tracers; do
			line=$(cmd "$tr" "$c")
			[ -n "$line" ] || continue
			t0=$(now)
			$line >/dev/null 2>&1 </dev/null
			echo $(( ($(now) - t0) / 1000000 )) >>"$tmp/$tr.$c"
		done
	done
	for tr in $tracers; do
		[ -s "$tmp/$tr.$c" ] || continue
		printf '%-6s %-15s %6d ms\n' "$c" "$tr" "$(sort -n "$tmp/$tr.$c" | sed -n 5p)"
	done
done
