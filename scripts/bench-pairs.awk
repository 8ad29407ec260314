# bench-pairs.awk reads `go test -bench` output and prints the table of
# benchmark pairs of docs/BENCHMARKS.md (see scripts/bench.sh). Each pair is
# one call in END: pair() for a subject against a baseline benchmark,
# metric() for a ratio a benchmark reports itself.

function median(key,   n, i, j, t, a) {
	n = split(vals[key], a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function spread(key,   n, i, a, lo, hi) {
	n = split(vals[key], a, " ")
	lo = hi = a[1]
	for (i = 2; i <= n; i++) { if (a[i] + 0 < lo + 0) lo = a[i]; if (a[i] + 0 > hi + 0) hi = a[i] }
	return sprintf("%.2f to %.2f", lo, hi)
}
function fmtns(ns) {
	if (ns >= 1e6) return sprintf("%.2f ms", ns / 1e6)
	if (ns >= 1e3) return sprintf("%.1f µs", ns / 1e3)
	return sprintf("%.0f ns", ns)
}
function verdict(r, target,   op, t) {
	if (target == "") return "- | -"
	op = substr(target, 1, 1); t = substr(target, 2) + 0
	return (op == "<" ? "≤ " : "≥ ") t "× | " (((op == "<" && r <= t) || (op == ">" && r >= t)) ? "met" : "**NOT met**")
}
function notrun(label, what) {
	printf "| %s | %s | not run | | |\n", label, what
}
function pair(label, pkg, subj, base, kind, target,   s, b, r) {
	s = pkg "|" subj "|ns/op"; b = pkg "|" base "|ns/op"
	if (!(s in vals) || !(b in vals)) { notrun(label, subj " vs " base); return }
	r = kind == "cost" ? median(s) / median(b) : median(b) / median(s)
	printf "| %s | %s (%s, %s allocs) vs %s (%s, %s allocs) | %s %.2f× | %s |\n", label, subj, fmtns(median(s)), allocs[pkg "|" subj], base, fmtns(median(b)), allocs[pkg "|" base], kind, r, verdict(r, target)
}
function metric(label, pkg, bench, unit, kind, target,   k, r) {
	k = pkg "|" bench "|" unit
	if (!(k in vals)) { notrun(label, bench " " unit); return }
	r = median(k)
	printf "| %s | %s, metric %s (runs: %s) | %s %.3f× | %s |\n", label, bench, unit, spread(k), kind, r, verdict(r, target)
}

/^pkg: / { pkg = $2; sub(".*/vouch/?", "", pkg); if (pkg == "") pkg = "."; next }
/^Benchmark/ && NF > 3 {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	for (i = 3; i <= NF; i++) {
		if ($(i) ~ /\// || $(i) ~ /-rate$/) vals[pkg "|" name "|" $(i)] = vals[pkg "|" name "|" $(i)] " " $(i-1)
		if ($(i) == "allocs/op") allocs[pkg "|" name] = $(i-1)
	}
}
END {
	print "| figure | subject vs baseline (medians) | ratio | target | |"
	print "|---|---|---|---|---|"
	pair("Engine v3 validate, 5 instant workers, vs a bare errgroup fan-out", "router", "ValidateV3_fiveInstant/engine", "ValidateV3_fiveInstant/errgroup", "cost", "<2")
	pair("Engine v3 validate, 5 instant workers: reputation on vs off", "router", "Reputation/on", "Reputation/off", "cost", "<1.1")
	metric("the same, interleaved in one loop: reputation on vs off", "router", "EngineReputation", "on/off", "cost", "<1.1")
	metric("the same, interleaved: weighted aggregation vs reputation off", "router", "EngineReputation", "weighted/off", "cost", "")
	pair("consensus Runner, 5 instant replicas, vs a bare errgroup fan-out", "consensus", "FanOut/runner", "FanOut/errgroup", "cost", "")
	pair("early quorum: Engine v3, 3 workers at 10ms + 2 at 1s, vs the third-fastest worker", "router", "EarlyQuorum/engine", "EarlyQuorum/wait", "cost", "<1.2")
	pair("early quorum: consensus Runner alone vs 10ms", "consensus", "EarlyQuorum/runner", "EarlyQuorum/wait10ms", "cost", "<1.2")
	pair("Client → Handler → Engine (v3 validate, 3 workers) over loopback vs a bare JSON echo", "router", "EngineLoopback/client-handler-engine", "EngineLoopback/echo", "rate", ">0.5")
	pair("Client → Handler → fake Service (v2 validate) over loopback vs a bare JSON echo", "router", "Loopback/client-handler-service", "Loopback/echo", "rate", ">0.5")
	pair("v3 decode with the top-level session_pool check vs without", "router", "V3Decode_sessionPool/with-check", "V3Decode_sessionPool/without-check", "cost", "")
	pair("v3 request encoded with session ids as strings vs as numbers", "router", "QuoteSessionIDs/quoted", "QuoteSessionIDs/marshal", "cost", "")
	pair("jsonbody decode (UTF-8, depth, repeated members) vs encoding/json", "internal/jsonbody", "Unmarshal/jsonbody", "Unmarshal/encoding_json", "cost", "")
	metric("engine v3 validate: global no-op telemetry vs switched off, interleaved", "router", "NoopTelemetry/engine-v3", "noop/off", "cost", "<1.05")
	metric("loopback v3 validate: global no-op telemetry vs switched off, interleaved", "router", "NoopTelemetry/loopback", "noop/off", "cost", "<1.05")
	pair("engine v3 validate with an SDK recording every span and metric vs no-op", "router", "ValidateV3_telemetry/sdk", "ValidateV3_telemetry/noop", "cost", "")
	pair("trust call with a detached receipt: global no-op telemetry vs off", "trust", "Call_receiptTelemetry/global", "Call_receiptTelemetry/off", "cost", "")
	pair("receipt build+hash+sign+verify vs raw Ed25519 sign+verify", "receipt", "Receipt/issue_and_verify", "Receipt/raw_ed25519", "rate", ">0.7")
	metric("receipt vs raw Ed25519, alternated in one loop", "receipt", "ReceiptRate", "receipt-rate", "rate", ">0.7")
	metric("receipt issuance with the log vs without, bbolt", "receipt/boltstore", "IssueLog", "log-rate", "rate", ">0.8")
	metric("receipt issuance with the log vs without, PostgreSQL", "pgstore", "IssueLog", "log-rate", "rate", ">0.8")
	pair("memory store put (1 KiB) vs mutex+map", "receipt", "MemStore/put", "RawMap/put", "cost", "")
	pair("memory store get vs mutex+map", "receipt", "MemStore/get", "RawMap/get", "cost", "")
	pair("bbolt store put (fsync) vs raw bbolt Update", "receipt/boltstore", "Store/put", "RawBolt/put", "cost", "")
	pair("bbolt store get vs raw bbolt View", "receipt/boltstore", "Store/get", "RawBolt/get", "cost", "")
	pair("PostgreSQL receipt put vs bbolt put", "pgstore", "ReceiptPut/postgres", "ReceiptPut/bbolt", "cost", "")
	pair("PostgreSQL receipt get vs bbolt get", "pgstore", "ReceiptGet/postgres", "ReceiptGet/bbolt", "cost", "")
	pair("idempotent call (reserve, complete, replay): PostgreSQL vs memory", "pgstore", "IdempotentCall/postgres", "IdempotentCall/memory", "cost", "")
	pair("trial limit decision: PostgreSQL (shared) vs in-process token bucket", "pgstore", "TrialAllow/postgres", "TrialAllow/memory", "cost", "")
	pair("chatworker validate job vs a bare POST+decode to the same fake endpoint", "router/chatworker", "Worker_Work/worker", "Worker_Work/baseline=post+decode", "cost", "")
	pair("chatworker answer parse (bare JSON) vs json.Unmarshal", "router/chatworker", "ParseAnswer/bare", "ParseAnswer/baseline=unmarshal", "cost", "")
	pair("chatworker answer parse (JSON amid prose) vs json.Unmarshal", "router/chatworker", "ParseAnswer/prose", "ParseAnswer/baseline=unmarshal", "cost", "")
	pair("trust call in process vs over plain HTTP", "trust/trustmcp", "ValidateClaim/transport=none", "ValidateClaim/transport=http", "cost", "")
	pair("MCP tool call, in-memory transport, vs plain HTTP", "trust/trustmcp", "ValidateClaim/transport=mcp-memory", "ValidateClaim/transport=http", "cost", "")
	pair("MCP tool call, Streamable HTTP, vs plain HTTP", "trust/trustmcp", "ValidateClaim/transport=mcp-http", "ValidateClaim/transport=http", "cost", "")
}
