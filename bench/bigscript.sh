#!/bin/sh
# bench/bigscript.sh: the cost of loading a script of many clauses on
# one probe, as root: `kdtrace -q -s SCRIPT -n 'BEGIN { exit(0); }'`
# on scripts of 1,000 and 10,000 clauses on syscall:::entry, each
# clause `/pid == N/ { BODY }` with BODY `@[N] = count();` (10,000 of
# them make 8.5 MB of DOF, over dtrace_dof_maxsize's 8 MiB, which
# kdtrace enforces as FreeBSD's kernel does: 9,000 are run too) and
# `trace(arg0);`.
# For each run: its wall time, its CPU time (user and system: the
# kernel's verifier counts as the latter) and its peak resident memory
# (VmHWM, as GNU time reports it), or its error. With a git revision
# (such as the commit before the chains), the same runs of kdtrace
# built from it follow, for the figures before and after.
#
# The syscall provider lists the calls tracefs lists; where tracefs is
# not mounted, the runs are made in a mount namespace of their own with
# it mounted there (unshare -m), as the kernel's function list names
# calls that have no number on x86-64.
#
#	sh bench/bigscript.sh [git-revision]
set -eu
if ! grep -q ' /sys/kernel/tracing tracefs ' /proc/mounts && [ -z "${KD_BENCH_NS:-}" ]; then
	exec unshare -m env KD_BENCH_NS=1 sh -c 'mount -t tracefs nodev /sys/kernel/tracing && exec sh "$0" "$@"' "$0" "$@"
fi
cd "$(dirname "$0")/.."
rev=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v /usr/bin/time >/dev/null || { echo "GNU time (/usr/bin/time) is needed" >&2; exit 1; }
go build -o "$tmp/kdtrace" ./cmd/kdtrace
if [ -n "$rev" ]; then
	mkdir "$tmp/before"
	git archive "$rev" | tar -x -C "$tmp/before"
	(cd "$tmp/before" && go build -o "$tmp/kdtrace-before" ./cmd/kdtrace)
fi

for n in 1000 9000 10000; do
	i=1
	while [ "$i" -le "$n" ]; do
		echo "syscall:::entry /pid == $i/ { @[$i] = count(); }"
		i=$((i + 1))
	done > "$tmp/count$n.d"
	sed 's/{ @\[[0-9]*\] = count(); }/{ trace(arg0); }/' "$tmp/count$n.d" > "$tmp/trace$n.d"
done

# measure KDTRACE SCRIPT prints a run's figures, or its error.
cat > "$tmp/measure" <<'EOF'
#!/bin/sh
out=$(/usr/bin/time -f '%e %U %S %M' "$1" -q -s "$2" -n 'BEGIN { exit(0); }' 2>&1 >/dev/null) || true
last=$(printf '%s\n' "$out" | tail -n 1)
case $last in
[0-9]*\ [0-9]*\ [0-9]*\ [0-9]*)
	err=$(printf '%s\n' "$out" | sed '$d' | head -n 1 | sed 's/^[^ :]*: //' | cut -c 1-150)
	set -- $last
	if [ -n "$err" ]; then
		printf '%8.2f %8.2f %8.2f %8d   %s\n' "$1" "$2" "$3" "$(($4 / 1024))" "$err"
	else
		printf '%8.2f %8.2f %8.2f %8d\n' "$1" "$2" "$3" "$(($4 / 1024))"
	fi ;;
*) printf '%s\n' "$out" ;;
esac
EOF
chmod +x "$tmp/measure"

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
for k in kdtrace kdtrace-before; do
	[ -x "$tmp/$k" ] || continue
	echo "$k"
	printf '   %-22s %8s %8s %8s %8s\n' "clauses" "wall s" "user s" "sys s" "peak MB"
	for f in count1000 count9000 count10000 trace1000 trace10000; do
		printf '   %-22s ' "$f"
		"$tmp/measure" "$tmp/$k" "$tmp/$f.d"
	done
done
