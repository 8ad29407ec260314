#!/usr/bin/env bash
# testtime.sh measures the README's test command, `go test -race ./...`,
# on an empty build cache (cold) and again with the cache warm, and prints
# the figures with the date, the commit, the Go version and the machine,
# ready to paste into the README. Modules are downloaded first, so that
# neither figure counts the network. Both runs pass -count=1, so that no
# test result is taken from the cache: warm means compiled, not skipped.
#
#   scripts/testtime.sh                 both runs (clears the build cache)
#   WARM_ONLY=1 scripts/testtime.sh     the warm run only
#   SLOWEST=10 scripts/testtime.sh      also list the 10 slowest packages
#
# PostgreSQL tests run when VOUCH_TEST_DATABASE_URL is set, for example by
# `eval "$(scripts/pg-test.sh start)"`; the output says whether it was.
# A run that fails prints its failures and exits non-zero: a figure is
# quoted only for a passing run.
set -euo pipefail
cd "$(dirname "$0")/.."

slowest=${SLOWEST:-5}
if [ "$slowest" -gt 0 ] && ! command -v jq >/dev/null; then
	echo "testtime: listing the slowest packages needs jq (apt-get install jq), or run with SLOWEST=0" >&2
	exit 2
fi
go mod download

run() { # run LABEL: runs the tests once, prints "LABEL: <seconds> s"
	local label=$1 log start end
	log=$(mktemp)
	start=$(date +%s.%N)
	if ! go test -race -count=1 -json ./... >"$log" 2>&1; then
		grep -E '"Action":"fail"' "$log" | head -20 >&2 || true
		echo "testtime: $label run failed; output in $log" >&2
		exit 1
	fi
	end=$(date +%s.%N)
	awk -v l="$label" -v s="$start" -v e="$end" 'BEGIN { printf "%-5s %4.0f s\n", l":", e - s }'
	if [ "$label" = warm ] && [ "$slowest" -gt 0 ]; then
		echo "slowest packages (warm, seconds):"
		jq -r 'select(.Action == "pass" and .Test == null and .Elapsed != null) | "\(.Elapsed) \(.Package)"' "$log" |
			sort -rn | head -"$slowest" | awk '{ printf "  %6.1f  %s\n", $1, $2 }'
	fi
	rm -f "$log"
}

commit=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	commit="$commit (with uncommitted changes)"
fi
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || uname -m)
db=no
[ -n "${VOUCH_TEST_DATABASE_URL:-}" ] && db=yes

echo "\$ go test -race ./...   (scripts/testtime.sh)"
echo "date:    $(date -u +%Y-%m-%d)"
echo "commit:  $commit"
echo "go:      $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH)"
echo "machine: $(nproc) cores, $cpu; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "postgres tests: $db"
if [ -z "${WARM_ONLY:-}" ]; then
	go clean -cache
	run cold
fi
run warm
