"""The live check's driver: sends each claim of claims.json to a running
examples/server as POST /api/v3/validate, and prints a Markdown row for
the panel: calls answered, unparsed runs, right, runs a call, latency.

    python3 check.py BASE_URL API_KEY NAME REPLICAS SESSIONS CLAIMS

SESSIONS is a comma-separated session pool ("1" or "1,2,3"). Each answer
other than 200 is printed to standard error. Exits 1 when fewer than 90%
of the calls are answered: what the chat worker did before it read the
verdict first (5 of 40 answered), not a small model's bad day. Only the
standard library: it runs on any python3.
"""

import json
import statistics
import sys
import time
import urllib.error
import urllib.request


def call(base, key, body):
    req = urllib.request.Request(base + "/api/v3/validate", data=json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + key,
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def main():
    base, key, name, replicas, sessions, path = sys.argv[1:7]
    claims = json.load(open(path))
    pool = sessions.split(",")
    answered = unparsed = right = runs = 0
    latencies = []
    for i, c in enumerate(claims):
        body = {
            "request_id": f"live-{i}",
            "claim": {"type": "answer", "description": c["description"], "output": c["output"]},
            "policy": {"tier": "safe", "redundancy": int(replicas), "rules": ["accuracy"]},
            "consensus": {"replicas": int(replicas), "session_pool": pool, "aggregation": "majority",
                          "disagreement_policy": "return_all"},
        }
        start = time.monotonic()
        status, resp = call(base, key, body)
        latencies.append(time.monotonic() - start)
        if status != 200:
            print(f"{name}: claim {i}: HTTP {status}: {resp.get('detail', resp)}", file=sys.stderr)
            continue
        answered += 1
        rs = resp.get("evidence", {}).get("runs", [])
        runs += len(rs)
        unparsed += sum(1 for r in rs if r.get("label") == "ERROR")
        right += resp.get("verdict") == c["truth"]
    n = len(claims)
    print(f"| {name} | {answered} / {n} | {unparsed} of {runs} | {right} / {n} ({100 * right // n}%) "
          f"| {runs / max(answered, 1):.2f} | {statistics.median(latencies):.2f} s |")
    sys.exit(1 if answered < 0.9 * n else 0)


if __name__ == "__main__":
    main()
