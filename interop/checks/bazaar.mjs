// bazaar.mjs: x402 discovery as the official @x402/extensions reads it.
// For each paid route of examples/server at VOUCH_URL, the 402 answer must
// carry Cache-Control: no-store (the value @x402/core sends), a resource
// with description and mimeType, and a bazaar extension that the official
// validators accept and from which a facilitator extracts the route's
// method and input (version 2 terms); the version 1 terms in the body must
// yield the same through extractDiscoveryInfoV1. It prints "ok <name>" or
// "FAIL <name>: why" per route and exits non-zero on any failure.
//
// Environment: VOUCH_URL (the server's base URL).
import {
  BAZAAR,
  extractDiscoveryInfo,
  extractDiscoveryInfoV1,
  validateDiscoveryExtension,
  validateDiscoveryExtensionSpec,
} from "@x402/extensions/bazaar";
import { PAYMENT_REQUIRED_CACHE_CONTROL, decodePaymentRequiredHeader } from "@x402/core/http";

const base = (process.env.VOUCH_URL || "").replace(/\/$/, "");
if (!base) {
  console.log("FAIL bazaar: VOUCH_URL is not set");
  process.exit(1);
}

const routes = [
  ["POST", "/api/v2/x402/validate", { session_id: 1, claim: { type: "tool_output", output: "17 * 3 = 51" } }],
  ["POST", "/api/v1/x402/delegate", { session_id: 1, task_request_input: "What is 17 * 3?" }],
  ["POST", "/api/v4/x402/trust", { mode: "validation", policy: "safe", task: { claimed_result: "51" } }],
  ["GET", "/api/v1/x402/ping", undefined],
];

const key = typeof BAZAAR === "string" ? BAZAAR : BAZAAR.key;
let failed = false;

function check(name, ok, detail) {
  console.log(ok ? `ok bazaar ${name}` : `FAIL bazaar ${name}: ${String(detail).replace(/\s+/g, " ").trim()}`);
  if (!ok) failed = true;
}

for (const [method, path, body] of routes) {
  const name = `${method} ${path}`;
  try {
    const resp = await fetch(base + path, {
      method,
      headers: body ? { "content-type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined,
    });
    const v1 = await resp.json();
    const header = resp.headers.get("payment-required");
    if (resp.status !== 402 || !header) {
      check(name, false, `status ${resp.status}, PAYMENT-REQUIRED ${header ? "present" : "missing"}; want 402 with terms`);
      continue;
    }
    const cache = resp.headers.get("cache-control");
    const terms = decodePaymentRequiredHeader(header);
    const ext = terms.extensions?.[key];
    const problems = [];
    if (cache !== PAYMENT_REQUIRED_CACHE_CONTROL) problems.push(`Cache-Control ${cache}, want ${PAYMENT_REQUIRED_CACHE_CONTROL}`);
    if (!terms.resource?.description || !terms.resource?.mimeType) problems.push(`resource ${JSON.stringify(terms.resource)} lacks description or mimeType`);
    if (!ext) {
      problems.push(`no extensions.${key}`);
    } else {
      const valid = validateDiscoveryExtension(ext);
      if (!valid.valid) problems.push(`validateDiscoveryExtension: ${valid.errors.join("; ")}`);
      const spec = validateDiscoveryExtensionSpec(ext);
      if (!spec.valid) problems.push(`validateDiscoveryExtensionSpec: ${spec.errors.join("; ")}`);
      // What a facilitator catalogs from the payload a client echoes.
      const payload = { x402Version: 2, resource: terms.resource, accepted: terms.accepts[0], payload: {}, extensions: terms.extensions };
      const found = extractDiscoveryInfo(payload, terms.accepts[0]);
      const info = found?.discoveryInfo ?? found;
      if (info?.input?.method !== method) problems.push(`extractDiscoveryInfo gave ${JSON.stringify(found)}, want method ${method}`);
      if (method === "POST" && !ext.schema?.properties?.input?.properties?.body?.properties) problems.push("no input schema under schema.properties.input.properties.body");
      if (!ext.schema?.properties?.output?.properties?.example) problems.push("no output schema under schema.properties.output.properties.example");
    }
    const infoV1 = extractDiscoveryInfoV1(v1.accepts?.[0] ?? {});
    if (infoV1?.input?.method !== method) problems.push(`extractDiscoveryInfoV1 gave ${JSON.stringify(infoV1)}, want method ${method}`);
    check(name, problems.length === 0, problems.join("; "));
  } catch (err) {
    check(name, false, String(err));
  }
}
process.exit(failed ? 1 : 0);
