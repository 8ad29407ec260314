#!/usr/bin/env bash
# bench.sh runs every benchmark of vouch that has a baseline, in one go,
# and prints each figure as a ratio to its baseline measured in the same
# run: the machine, the exact command, the raw `go test -bench` output and a
# table of ratios. docs/BENCHMARKS.md is a copy of its output.
#
#   scripts/bench.sh                 5 runs of each benchmark, 1s each
#   COUNT=3 BENCHTIME=500ms scripts/bench.sh
#
# PostgreSQL figures are included when VOUCH_TEST_DATABASE_URL is set, for
# example by `eval "$(scripts/pg-test.sh start)"`.
#
# Each ratio is taken between medians of ns/op over the COUNT runs. "cost"
# is subject ns/op / baseline ns/op (lower is better); "rate" is baseline
# ns/op / subject ns/op, the subject's throughput as a fraction of the
# baseline's (higher is better).
set -euo pipefail
cd "$(dirname "$0")/.."

count=${COUNT:-5}
benchtime=${BENCHTIME:-1s}
pkgs=(./consensus ./router ./router/chatworker ./receipt ./receipt/boltstore)
if [[ -n ${VOUCH_TEST_DATABASE_URL:-} ]]; then
	pkgs+=(./pgstore)
fi
bench='^Benchmark(FanOut|EarlyQuorum|ValidateV3_fiveInstant|EngineLoopback|Loopback|Receipt|MemStore|RawMap|Store|RawBolt|Worker_Work|ParseAnswer|ReceiptPut|ReceiptGet|IdempotentCall|TrialAllow)$'
cmd=(go test -run='^$' -bench="$bench" -benchmem -count="$count" -benchtime="$benchtime" "${pkgs[@]}")

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

echo "# Machine"
echo
echo "    $(go version)"
echo "    nproc: $(nproc)"
echo "    cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
echo "    date: $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "# Command"
echo
echo "    go test -run='^\$' -bench='$bench' -benchmem -count=$count -benchtime=$benchtime ${pkgs[*]}"
echo
"${cmd[@]}" >"$raw" 2>&1 || { cat "$raw"; exit 1; }

echo "# Ratios (medians of $count runs)"
echo
# pairs: package, subject, baseline, kind (cost or rate), target, label.
awk -v count="$count" '
function median(key,   n, i, j, t, a) {
	n = split(vals[key], a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function fmtns(ns) {
	if (ns >= 1e6) return sprintf("%.2f ms", ns / 1e6)
	if (ns >= 1e3) return sprintf("%.1f µs", ns / 1e3)
	return sprintf("%.0f ns", ns)
}
function row(pkg, subj, base, kind, target, label,   s, b, r, met, op) {
	s = pkg "|" subj; b = pkg "|" base
	if (!(s in vals) || !(b in vals)) return
	if (kind == "cost") r = median(s) / median(b); else r = median(b) / median(s)
	met = "-"
	if (target != "") {
		op = substr(target, 1, 1); t = substr(target, 2) + 0
		met = ((op == "<" && r <= t) || (op == ">" && r >= t)) ? "met" : "NOT met"
		target = (op == "<" ? "≤ " : "≥ ") t "×"
	} else target = "-"
	printf "| %s | %s (%s, %s allocs) | %s (%s, %s allocs) | %s %.2f× | %s | %s |\n", label, subj, fmtns(median(s)), allocs[s], base, fmtns(median(b)), allocs[b], kind, r, target, met
}
/^pkg: / { pkg = $2; sub(".*/vouch/?", "", pkg); if (pkg == "") pkg = "."; next }
/^Benchmark/ && / ns\/op/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	for (i = 3; i <= NF; i++) {
		if ($(i) == "ns/op") vals[pkg "|" name] = vals[pkg "|" name] " " $(i-1)
		if ($(i) == "allocs/op") allocs[pkg "|" name] = $(i-1)
	}
}
END {
	print "| figure | subject | baseline | ratio | target | |"
	print "|---|---|---|---|---|---|"
	row("router", "ValidateV3_fiveInstant/engine", "ValidateV3_fiveInstant/errgroup", "cost", "<2", "Engine v3 validate, 5 instant workers vs bare errgroup fan-out")
	row("consensus", "FanOut/runner", "FanOut/errgroup", "cost", "", "consensus Runner, 5 instant replicas vs bare errgroup fan-out")
	row("router", "EarlyQuorum/engine", "EarlyQuorum/wait", "cost", "<1.2", "early quorum: Engine v3, 3 workers at 10ms + 2 at 1s vs the third-fastest worker (10ms)")
	row("consensus", "EarlyQuorum/runner", "EarlyQuorum/wait10ms", "cost", "<1.2", "early quorum: consensus Runner alone vs 10ms")
	row("router", "EngineLoopback/client-handler-engine", "EngineLoopback/echo", "rate", ">0.5", "Client → Handler → Engine (v3 validate, 3 workers) over loopback vs bare net/http JSON echo")
	row("router", "Loopback/client-handler-service", "Loopback/echo", "rate", ">0.5", "Client → Handler → fake Service (v2 validate) over loopback vs bare net/http JSON echo")
	row("receipt", "Receipt/issue_and_verify", "Receipt/raw_ed25519", "rate", ">0.7", "receipt build+hash+sign+verify vs raw ed25519.Sign+Verify of the same bytes")
	row("receipt", "MemStore/put", "RawMap/put", "cost", "", "memory store put (1 KiB) vs mutex+map")
	row("receipt", "MemStore/get", "RawMap/get", "cost", "", "memory store get vs mutex+map")
	row("receipt/boltstore", "Store/put", "RawBolt/put", "cost", "", "bbolt store put (fsync) vs raw bbolt Update")
	row("receipt/boltstore", "Store/get", "RawBolt/get", "cost", "", "bbolt store get vs raw bbolt View")
	row("pgstore", "ReceiptPut/postgres", "ReceiptPut/bbolt", "cost", "", "PostgreSQL store put vs bbolt store put")
	row("pgstore", "ReceiptGet/postgres", "ReceiptGet/bbolt", "cost", "", "PostgreSQL store get vs bbolt store get")
	row("pgstore", "IdempotentCall/postgres", "IdempotentCall/memory", "cost", "", "idempotent call (reserve, complete, replay): PostgreSQL vs memory")
	row("pgstore", "TrialAllow/postgres", "TrialAllow/memory", "cost", "", "trial limit decision: PostgreSQL (shared) vs in-process token bucket")
	row("router/chatworker", "Worker_Work/worker", "Worker_Work/baseline=post+decode", "cost", "", "chatworker validate job vs bare POST+decode to the same fake endpoint")
	row("router/chatworker", "ParseAnswer/bare", "ParseAnswer/baseline=unmarshal", "cost", "", "chatworker answer parse (bare JSON) vs json.Unmarshal")
	row("router/chatworker", "ParseAnswer/prose", "ParseAnswer/baseline=unmarshal", "cost", "", "chatworker answer parse (JSON amid prose) vs json.Unmarshal")
}' "$raw"
echo
echo "# Raw output"
echo
sed 's/^/    /' "$raw"
