// @x402/fetch pays examples/server's x402 routes with @x402/evm: the
// router's validate (version 2 terms), the paid ping, and the trust call;
// then each again as a client of version 1 does, when the 402 carries
// only the version 1 body (X-PAYMENT, X-PAYMENT-RESPONSE).
import { wrapFetchWithPayment, decodePaymentResponseHeader } from "@x402/fetch";
import { env } from "../lib/env.mjs";
import { ok, equal, show } from "../lib/assert.mjs";
import { payer } from "../lib/x402.mjs";

const { client, account } = payer();
const pay = wrapFetchWithPayment(fetch, client);

const routes = [
  { method: "POST", path: "/api/v2/x402/validate", body: { session_id: 1, claim: { type: "tool_output", output: "17 * 3 = 51" } },
    answer: (b) => equal(b.verdict, "VALID", "validate verdict") },
  { method: "GET", path: "/api/v1/x402/ping", answer: (b) => equal(b.message, "pong", "ping message") },
  { method: "POST", path: "/api/v4/x402/trust",
    body: { mode: "validation", policy: "safe", task: { type: "tool_output", claimed_result: "17 * 3 = 51" } },
    answer: (b) => equal(b.status, "VALID", "trust status") },
];

for (const r of routes) {
  const what = `${r.method} ${r.path}`;
  const init = { method: r.method, headers: {} };
  if (r.body) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(r.body);
  }
  // Unpaid, the route asks for payment.
  const unpaid = await fetch(new URL(r.path, env.baseURL), init);
  equal(unpaid.status, 402, `${what} unpaid: status`);
  ok(unpaid.headers.get("payment-required"), `${what} unpaid: no PAYMENT-REQUIRED header`);

  const res = await pay(new URL(r.path, env.baseURL), init);
  const text = await res.text();
  equal(res.status, 200, `${what} paid: status (body ${show(text)})`);
  const header = res.headers.get("payment-response");
  ok(header, `${what} paid: no PAYMENT-RESPONSE header`);
  const settled = decodePaymentResponseHeader(header);
  ok(settled.success === true, `${what} paid: settlement ${show(settled)}`);
  equal(settled.payer && settled.payer.toLowerCase(), account.address.toLowerCase(), `${what} paid: settlement payer`);
  r.answer(text ? JSON.parse(text) : {});
}

// Version 1: the same routes, the PAYMENT-REQUIRED header hidden from the
// client, as a server of version 1 answers; @x402/fetch then reads the
// terms from the body and pays with @x402/evm's version 1 scheme.
const v1 = payer();
const sent = [];
const v1Fetch = async (input, init) => {
  const req = new Request(input, init);
  if (req.headers.has("x-payment")) sent.push(req.headers.get("x-payment"));
  const res = await fetch(req);
  if (res.status !== 402) return res;
  const headers = new Headers(res.headers);
  headers.delete("payment-required");
  return new Response(await res.text(), { status: res.status, headers });
};
const payV1 = wrapFetchWithPayment(v1Fetch, v1.client);
for (const r of routes) {
  const what = `version 1 ${r.method} ${r.path}`;
  const init = { method: r.method, headers: {} };
  if (r.body) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(r.body);
  }
  const before = sent.length;
  const res = await payV1(new URL(r.path, env.baseURL), init);
  const text = await res.text();
  equal(res.status, 200, `${what} paid: status (body ${show(text)})`);
  equal(sent.length, before + 1, `${what}: X-PAYMENT headers sent`);
  equal(JSON.parse(Buffer.from(sent[before], "base64").toString()).x402Version, 1, `${what}: X-PAYMENT x402Version`);
  const header = res.headers.get("x-payment-response");
  ok(header, `${what} paid: no X-PAYMENT-RESPONSE header`);
  const settled = decodePaymentResponseHeader(header);
  ok(settled.success === true, `${what} paid: settlement ${show(settled)}`);
  equal(settled.payer && settled.payer.toLowerCase(), v1.account.address.toLowerCase(), `${what} paid: settlement payer`);
  ok(!settled.network.includes(":"), `${what} paid: settlement network ${show(settled.network)}, want a version 1 name`);
  r.answer(text ? JSON.parse(text) : {});
}
