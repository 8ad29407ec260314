// A receipt as JavaScript's JSON writes it again verifies over HTTP
// (POST /api/v4/verify_receipt) and over MCP (verify_receipt, with the
// official TypeScript SDK), and both doors give the same answer for the
// same text; a number rewritten in the text fails the schema check with
// the rule number at both doors.
import { env } from "../lib/env.mjs";
import { ok, equal, show } from "../lib/assert.mjs";
import { connectHTTP, call } from "../lib/mcp.mjs";

const headers = { Authorization: `Bearer ${env.apiKey}`, "Content-Type": "application/json" };

// A trust call with its receipt inline.
const res = await fetch(new URL("/api/v4/trust", env.baseURL), {
  method: "POST", headers,
  body: JSON.stringify({ mode: "validation", policy: "safe", task: { type: "tool_output", claimed_result: "17 * 3 = 51" },
    receipt: { mode: "inline", include: { policy_snapshot: true, consensus_snapshot: true, router_trace_refs: true } } }),
});
const body = await res.text();
equal(res.status, 200, `trust call: status (body ${show(body)})`);
const receipt = JSON.parse(body).receipt;
ok(receipt && receipt.signing, `trust call: no signed receipt in ${show(body)}`);

// The receipt's members in reverse order, as another writer may put them.
const reversed = (v) => Array.isArray(v) ? v.map(reversed)
  : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reversed(x)])) : v;
const compact = JSON.stringify(receipt);
const texts = {
  "JSON.stringify, indented": { text: JSON.stringify(receipt, null, 2), valid: true },
  "JSON.stringify, members reversed": { text: JSON.stringify(reversed(receipt)), valid: true },
  "a session id rewritten to 2^53+1": {
    text: compact.replace(/"sessions":\[(\d+)/, '"sessions":[9007199254740993'), valid: false, rule: "number" },
  "a fraction in replicas": { text: compact.replace(/"replicas":(\d+)/, '"replicas":$1.5'), valid: false, rule: "number" },
};

const mcp = await connectHTTP(env.baseURL, env.apiKey);
try {
  for (const [what, want] of Object.entries(texts)) {
    ok(want.text !== compact, `${what}: the edit did not apply`);
    const r = await fetch(new URL("/api/v4/verify_receipt", env.baseURL), {
      method: "POST", headers, body: `{"receipt":${want.text}}`,
    });
    const viaHTTP = await r.json();
    equal(r.status, 200, `${what}: HTTP status`);
    equal(viaHTTP.valid, want.valid, `${what}: HTTP valid (checks ${show(viaHTTP.checks)})`);
    if (want.valid) equal(viaHTTP.as_issued, false, `${what}: HTTP as_issued`);
    if (want.rule) {
      const schema = viaHTTP.checks.find((c) => c.name === "schema");
      equal(schema && schema.errors && schema.errors[0].rule, want.rule, `${what}: HTTP schema rule`);
    }
    // The same text over MCP, in a string so that no writer changes it.
    const viaMCP = (await call(mcp, "verify_receipt", { receipt: want.text })).out;
    equal(viaMCP, viaHTTP, `${what}: MCP answer against HTTP's`);
  }
} finally {
  await mcp.close();
}
