#!/bin/sh
# bench/providers.sh: what each provider costs a user who names all its
# probes, as root, beside bpftrace where it has the same probes
# (apt-get install bpftrace):
#
#   1. listing: `kdtrace -l` (probes listed, median wall time of 5)
#      against `bpftrace -l`;
#   2. for a glob over each provider's probes, the probes it matched and
#      the median wall time of 3 runs that attach them all, exit in
#      BEGIN and detach: the cost of turning the provider on and off.
#      sdt:sched:: is set beside bpftrace's tracepoint:sched:*, the same
#      events.
#
#	sh bench/providers.sh
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kdtrace" ./cmd/kdtrace
kd=$tmp/kdtrace
bt=$(command -v bpftrace || true)
[ -n "$bt" ] || echo "bpftrace is not installed: its figures are left out" >&2

# now prints the time in nanoseconds.
now() { date +%s%N; }

# median prints the median of its arguments.
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "1. listing, median of 5"
ts=""
for i in 1 2 3 4 5; do
	s=$(now); n=$("$kd" -l | wc -l); e=$(now); ts="$ts $(( (e - s) / 1000000 ))"
done
echo "   kdtrace -l:  $((n - 1)) probes, $(median $ts) ms"
if [ -n "$bt" ]; then
	ts=""
	for i in 1 2 3 4 5; do
		s=$(now); n=$("$bt" -l | wc -l); e=$(now); ts="$ts $(( (e - s) / 1000000 ))"
	done
	echo "   bpftrace -l: $n probes, $(median $ts) ms"
fi

echo "2. a glob over each provider: probes matched, median wall time of 3 (ms)"
for glob in 'syscall:::' 'proc:::' 'sched:::' 'io:::' 'ip:::' 'tcp:::' 'udp:::' \
	'lockstat:::*-spin,lockstat:::*-block' 'cpc:::cpu_clock-all-100000' \
	'profile-997' 'sdt:sched::' 'rawtp:sched::' 'rawtp:::'; do
	ts=""; n=""
	for i in 1 2 3; do
		s=$(now)
		if "$kd" -n "$glob { }" -n 'BEGIN { exit(0); }' >/dev/null 2>"$tmp/err"; then
			e=$(now); ts="$ts $(( (e - s) / 1000000 ))"
			n=$(sed -n "s/.*description '\([^']*\) ' matched \([0-9]*\) probe.*/\2/p" "$tmp/err" | head -1)
		else
			ts="failed"; n=$(head -1 "$tmp/err"); break
		fi
	done
	if [ "$ts" = failed ]; then
		printf '   %-40s %s\n' "$glob" "$n"
	else
		printf '   %-40s %6s probes %6s ms\n' "$glob" "$n" "$(median $ts)"
	fi
done
if [ -n "$bt" ]; then
	ts=""
	for i in 1 2 3; do
		s=$(now); "$bt" -e 'tracepoint:sched:* { } BEGIN { exit(); }' >/dev/null 2>&1; e=$(now)
		ts="$ts $(( (e - s) / 1000000 ))"
	done
	printf '   %-40s %6s probes %6s ms\n' "bpftrace tracepoint:sched:*" "$(grep -c '^sched:' /sys/kernel/tracing/available_events)" "$(median $ts)"
fi
