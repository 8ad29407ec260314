#!/usr/bin/env bash
# soak.sh runs a long load against the demo server on loopback and writes
# the section "Latest soak" of docs/BENCHMARKS.md: the machine, the commit,
# the exact commands, the server's live heap after each round of calls, and
# the load program's output. No figure of that section is typed by hand:
# re-run this script to bring it up to date.
#
#   scripts/soak.sh                        300,000 calls, rounds of 20,000, 256 clients
#   CALLS=200000 ROUND=10000 scripts/soak.sh
#   OUT=- scripts/soak.sh                  print the section instead of writing it
#
# The server (examples/server) keeps everything in memory: receipts,
# idempotency records, trial buckets. After each round, with no call in
# flight, the load program (examples/load) reads the server's
# /debug/vars?gc=1, which collects garbage first, so the heap figure is
# live memory. The server listens on ADDR and DEBUG_ADDR (loopback ports
# 18446 and 18447 by default); the load is bounded by DURATION (15m).
set -euo pipefail
cd "$(dirname "$0")/.."

calls=${CALLS:-300000}
round=${ROUND:-20000}
concurrency=${CONCURRENCY:-256}
duration=${DURATION:-15m}
addr=${ADDR:-127.0.0.1:18446}
debug=${DEBUG_ADDR:-127.0.0.1:18447}
out=${OUT:-docs/BENCHMARKS.md}

tmp=$(mktemp -d)
pid=
cleanup() {
	if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# The commit the binaries are built from (documents may change meanwhile).
commit=$(git rev-parse --short HEAD)
if [[ -n $(git status --porcelain --untracked-files=no -- '*.go' go.mod go.sum) ]]; then
	commit+=" with uncommitted changes to Go files"
fi
go build -o "$tmp/server" ./examples/server
go build -o "$tmp/load" ./examples/load
"$tmp/server" -addr "$addr" -debug-addr "$debug" >"$tmp/server.log" 2>&1 &
pid=$!
up=
for _ in $(seq 100); do
	if curl -fs -o /dev/null "http://$debug/debug/vars"; then up=1; break; fi
	sleep 0.1
done
if [[ -z $up ]]; then
	echo "soak: the server did not come up on $addr (debug $debug); its log:" >&2
	cat "$tmp/server.log" >&2
	exit 1
fi

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)
status=0
"$tmp/load" -url "http://$addr" -debug-url "http://$debug/debug/vars" -calls "$calls" -round "$round" \
	-concurrency "$concurrency" -duration "$duration" -progress 10s >"$tmp/out" 2>"$tmp/progress" || status=$?
took=$(($(date +%s) - start))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
pid=
if [[ $status != 0 ]]; then
	echo "soak: the load program exited with status $status; its messages:" >&2
	cat "$tmp/progress" >&2
fi

section=$tmp/section
{
	echo '<!-- scripts/soak.sh writes this section; do not edit it by hand -->'
	echo '### Latest soak'
	echo
	echo "    machine: $(uname -sm), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go env GOVERSION)"
	echo "    load average: $load_before before, $load_after after"
	echo "    commit: $commit"
	echo "    date: $(date -u +%Y-%m-%d)"
	echo "    took: ${took}s; the load program exited with status $status"
	echo
	echo 'Commands, from the repository root:'
	echo
	echo '    go build -o /tmp/s/server ./examples/server'
	echo '    go build -o /tmp/s/load ./examples/load'
	echo "    /tmp/s/server -addr $addr -debug-addr $debug &"
	echo "    /tmp/s/load -url http://$addr -debug-url http://$debug/debug/vars \\"
	echo "        -calls $calls -round $round -concurrency $concurrency -duration $duration"
	echo
	echo 'The server'"'"'s live heap after GC, by calls answered:'
	echo
	echo '| calls | live heap (MiB) |'
	echo '|---:|---:|'
	{ grep '^live heap after GC:' "$tmp/out" || true; } | sed 's/^live heap after GC: //' | tr ',' '\n' |
		sed -E 's/^ *([0-9.]+) MiB before the load$/| 0 | \1 |/; s/^ *([0-9.]+) MiB at ([0-9]+) calls$/| \2 | \1 |/'
	echo
	echo 'The load program'"'"'s output:'
	echo
	sed 's/^/    /; s/^    $//' "$tmp/out"
	echo '<!-- end of the section scripts/soak.sh writes -->'
} >"$section"

if [[ $out == - ]]; then
	cat "$section"
	exit "$status"
fi
begin='<!-- scripts/soak.sh writes this section; do not edit it by hand -->'
end='<!-- end of the section scripts/soak.sh writes -->'
if ! grep -qxF "$begin" "$out" || ! grep -qxF "$end" "$out"; then
	echo "soak.sh: $out has no section markers; add the two lines $begin and $end" >&2
	exit 1
fi
awk -v b="$begin" -v e="$end" -v f="$section" '
	$0 == b { while ((getline line < f) > 0) print line; skip = 1; next }
	$0 == e { skip = 0; next }
	!skip { print }
' "$out" >"$tmp/doc"
cp "$tmp/doc" "$out"
echo "soak.sh: wrote the latest soak into $out" >&2
exit "$status"
