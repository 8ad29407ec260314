// promtool check metrics (Debian's prometheus package) on every /metrics
// address of both servers: -metrics-addr and -debug-addr.
import { spawnSync } from "node:child_process";
import { env } from "../lib/env.mjs";
import { ok } from "../lib/assert.mjs";

const addrs = {
  "plain -metrics-addr": env.metricsAddr,
  "plain -debug-addr": env.debugAddr,
  "paid -metrics-addr": env.paidMetricsAddr,
  "paid -debug-addr": env.paidDebugAddr,
};
const problems = new Map(); // promtool's line → the addresses it was said of
for (const [what, addr] of Object.entries(addrs)) {
  const res = await fetch(`http://${addr}/metrics`);
  ok(res.status === 200, `${what}: GET /metrics answered ${res.status}`);
  const body = await res.text();
  ok(body.includes("# TYPE"), `${what}: /metrics has no metric`);
  const run = spawnSync(env.promtool, ["check", "metrics"], { input: body, encoding: "utf8" });
  if (run.error) throw run.error;
  const lines = (run.stdout + run.stderr).split("\n").filter((l) => l.trim());
  console.error(`${what}: promtool exit status ${run.status}${lines.length ? ":\n  " + lines.join("\n  ") : ""}`);
  if (run.status !== 0) {
    for (const line of lines.length ? lines : [`exit status ${run.status}`]) {
      problems.set(line, [...(problems.get(line) || []), what]);
    }
  }
}
ok(problems.size === 0, [...problems].map(([line, whats]) =>
  `${line} (${whats.length === Object.keys(addrs).length ? "every address" : whats.join(", ")})`).join("; "));
