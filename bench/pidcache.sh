#!/bin/sh
# bench/pidcache.sh: the cost of compiling a pid probe of a large
# program run by -c, cold (no index cached) and warm (the second and
# later runs), as root:
#
#	kdtrace -e -c BIG -n 'pid$target:a.out:main.main:entry { @ = count(); }'
#
# The probe's rewrite reads the program's DWARF (is main.main inlined
# anywhere?), whose index is cached by build-id. BIG is kdtrace itself,
# a Go program with its DWARF, or the program given. With a git revision
# (such as the commit before the cache keyed by the program rather than
# by /proc/PID/root), the same runs of kdtrace built from it follow.
#
#	sh bench/pidcache.sh [git-revision [program]]
set -eu
cd "$(dirname "$0")/.."
rev=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v /usr/bin/time >/dev/null || { echo "GNU time (/usr/bin/time) is needed" >&2; exit 1; }
go build -o "$tmp/kdtrace" ./cmd/kdtrace
big=${2:-$tmp/kdtrace}
if [ -n "$rev" ]; then
	mkdir "$tmp/before"
	git archive "$rev" | tar -x -C "$tmp/before"
	(cd "$tmp/before" && go build -o "$tmp/kdtrace-before" ./cmd/kdtrace)
fi
printf '%s: %s bytes\n' "$big" "$(wc -c < "$big")"
printf '%-16s %6s %8s %8s\n' kdtrace run wall-s rss-MB
for kd in kdtrace kdtrace-before; do
	[ -x "$tmp/$kd" ] || continue
	rm -rf "$tmp/cache"
	for run in cold warm warm warm; do
		XDG_CACHE_HOME=$tmp/cache /usr/bin/time -f '%e %M' -o "$tmp/t" \
			"$tmp/$kd" -e -c "$big" -n 'pid$target:a.out:main.main:entry { @ = count(); }'
		set -- $(cat "$tmp/t")
		printf '%-16s %6s %8s %8d\n' "$kd" "$run" "$1" "$(($2 / 1024))"
	done
done
