"""The live check's driver: sends each claim of claims.json to a running
examples/server as POST /api/v3/validate, and prints a Markdown row for
the panel: calls answered, unparsed runs, right, runs a call, latency.

    python3 check.py BASE_URL API_KEY NAME REPLICAS SESSIONS CLAIMS
    python3 check.py outcomes BASE_URL API_KEY CLAIMS

The second form measures confidence before and after outcomes: it sends
each claim as a trust validation (POST /api/v4/trust, policy safe: the
panel's three sessions), reports the outcome of the first 20 decided
calls over POST /api/v4/feedback, sends the 20 claims it did not report
on again, and prints, for those next 20 calls, the mean stated confidence
and the accuracy. It exits 1 when a report is refused.

The second form also exits 1 when fewer than 90% of the next 20 calls
are answered.

SESSIONS is a comma-separated session pool ("1" or "1,2,3"). Each answer
other than 200 is printed to standard error. Exits 1 when fewer than 90%
of the calls are answered, or more than 10% of the runs are unparsed
(ERROR): what the chat worker did before it read the verdict first (5 of
40 answered), not a small model's bad day. How many verdicts are right is
printed, not checked: it is the models' own worth, near chance for these
small models. Only the standard library: it runs on any python3.
"""

import json
import statistics
import sys
import time
import urllib.error
import urllib.request


def post(base, key, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"Authorization": "Bearer " + key,
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as resp:
            return resp.status, json.load(resp)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def trust_call(base, key, c):
    return post(base, key, "/api/v4/trust", {
        "mode": "validation", "policy": "safe",
        "task": {"type": "answer", "input": c["description"], "claimed_result": c["output"]},
    })


def outcomes(base, key, path):
    claims = json.load(open(path))
    reported, rest, refused = 0, [], 0
    stated_before = []
    for c in claims:
        if reported == 20:
            rest.append(c)
            continue
        status, resp = trust_call(base, key, c)
        decided = status == 200 and resp.get("status") in ("VALID", "INVALID")
        if not decided:
            rest.append(c)
            if status != 200:
                print(f"outcomes: HTTP {status}: {resp.get('detail', resp)}", file=sys.stderr)
            continue
        stated_before.append(resp["confidence"])
        status, fb = post(base, key, "/api/v4/feedback",
                          {"trace_id": resp["trace_id"], "right": resp["status"] == c["truth"]})
        if status != 200:
            refused += 1
            print(f"outcomes: report refused: HTTP {status}: {fb.get('detail', fb)}", file=sys.stderr)
            continue
        reported += 1
    stated, right, failed = [], 0, 0
    for c in rest[:20]:
        status, resp = trust_call(base, key, c)
        if status != 200:
            print(f"outcomes: HTTP {status}: {resp.get('detail', resp)}", file=sys.stderr)
            stated.append(0)
            failed += 1
            continue
        stated.append(resp["confidence"])
        right += resp.get("status") == c["truth"]
    n = len(stated)
    mean = statistics.mean(stated) if stated else 0
    print(f"| outcomes reported on {reported} calls (stated {statistics.mean(stated_before or [0]):.2f} before), "
          f"next {n} calls | mean stated confidence {mean:.2f} | right {right} / {n} ({right / max(n, 1):.2f}) "
          f"| stated minus right {mean - right / max(n, 1):+.2f} |")
    sys.exit(1 if refused or reported < 20 or failed > 0.1 * max(n, 1) else 0)


def main():
    if sys.argv[1] == "outcomes":
        outcomes(*sys.argv[2:5])
        return
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
        status, resp = post(base, key, "/api/v3/validate", body)
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
    sys.exit(1 if answered < 0.9 * n or unparsed > 0.1 * runs else 0)


if __name__ == "__main__":
    main()
