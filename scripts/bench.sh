#!/usr/bin/env bash
# bench.sh runs every benchmark pair of vouch in one go and writes the
# figures of docs/BENCHMARKS.md: the machine, the exact commands, a table of
# each subject against its baseline measured in the same run, and the raw
# `go test -bench` output. No figure in that document is typed by hand:
# re-run this script to bring all of them up to date.
#
#   scripts/bench.sh                   5 runs of each benchmark, 1s each
#   COUNT=3 BENCHTIME=500ms scripts/bench.sh
#   OUT=- scripts/bench.sh             print the section instead of writing it
#
# PostgreSQL figures are included when VOUCH_TEST_DATABASE_URL is set, for
# example by `eval "$(scripts/pg-test.sh start)"`; without it their rows say
# "not run".
#
# A pair's ratio is taken between medians over the COUNT runs: "cost" is
# subject ns/op ÷ baseline ns/op (lower is better), "rate" is baseline ÷
# subject, the subject's throughput as a fraction of the baseline's
# (higher is better). Benchmarks that time both sides in one loop (to keep
# a shared machine's drift out of the ratio) report the ratio as a metric of
# their own, and the table gives its median.
set -euo pipefail
cd "$(dirname "$0")/.."

count=${COUNT:-5}
benchtime=${BENCHTIME:-1s}
out=${OUT:-docs/BENCHMARKS.md}

# One go test run per package, each with the benchmarks of its pairs.
runs=(
	"./consensus|^Benchmark(FanOut|EarlyQuorum)\$"
	"./router|^Benchmark(ValidateV3_fiveInstant|EarlyQuorum|EngineLoopback|Loopback|V3Decode_sessionPool|QuoteSessionIDs|ValidateV3_telemetry|NoopTelemetry|Reputation|EngineReputation)\$"
	"./router/chatworker|^Benchmark(Worker_Work|ParseAnswer)\$"
	"./receipt|^Benchmark(Receipt|ReceiptRate|MemStore|RawMap)\$"
	"./receipt/boltstore|^Benchmark(Store|RawBolt|IssueLog)\$"
	"./internal/jsonbody|^BenchmarkUnmarshal\$"
	"./trust|^BenchmarkCall_receiptTelemetry\$"
	"./trust/trustmcp|^BenchmarkValidateClaim\$"
)
if [[ -n ${VOUCH_TEST_DATABASE_URL:-} ]]; then
	runs+=("./pgstore|^Benchmark(ReceiptPut|ReceiptGet|IdempotentCall|TrialAllow|IssueLog)\$")
fi

raw=$(mktemp)
section=$(mktemp)
trap 'rm -f "$raw" "$section"' EXIT

commands=()
for r in "${runs[@]}"; do
	pkg=${r%%|*} bench=${r#*|}
	cmd=(go test -run='^$' -bench="$bench" -benchmem -count="$count" -benchtime="$benchtime" "$pkg")
	commands+=("go test -run='^\$' -bench='$bench' -benchmem -count=$count -benchtime=$benchtime $pkg")
	echo "bench.sh: ${commands[-1]}" >&2
	"${cmd[@]}" >>"$raw" 2>&1 || { cat "$raw" >&2; exit 1; }
done

{
	echo "<!-- scripts/bench.sh writes this section; do not edit it by hand -->"
	echo
	echo "## Latest run"
	echo
	echo "Machine and time:"
	echo
	echo "    $(go version)"
	echo "    nproc: $(nproc), load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "    cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
	echo "    commit: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "    date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo
	echo "Commands (\`scripts/bench.sh\` with COUNT=$count BENCHTIME=$benchtime):"
	echo
	for c in "${commands[@]}"; do echo "    $c"; done
	echo
	echo "### Ratios (medians of $count runs)"
	echo
	awk -v count="$count" -f scripts/bench-pairs.awk "$raw"
	echo
	echo "### Raw output"
	echo
	grep -E '^(Benchmark|pkg:|ok|PASS|FAIL)' "$raw" | sed 's/^/    /'
} >"$section"

if [[ $out == - ]]; then
	cat "$section"
	exit 0
fi
# Replace everything from the marker line to the end of the document.
marker='<!-- scripts/bench.sh writes this section; do not edit it by hand -->'
head=$(mktemp)
awk -v m="$marker" '$0 == m { exit } { print }' "$out" >"$head"
cat "$head" "$section" >"$out"
rm -f "$head"
echo "bench.sh: wrote the latest run into $out" >&2
