// The x402 "auth-capture" scheme (escrow) between vouch and the official
// TypeScript client: @x402/evm's auth-capture client, as package-lock.json
// pins it, with @x402/fetch, pays vouch's trust call held in
// examples/server's offline escrow, by each asset-transfer method (ERC-3009
// receiveWithAuthorization and Permit2). A definitive verdict is what the
// trust call sells: a VALID claim is captured (5000), and an INVALID one
// too, and the buyer's balance in the escrow, read from the server's demo
// endpoint GET /x402/escrow/balance/{address}, is less exactly what was
// captured.
import { wrapFetchWithPayment, decodePaymentResponseHeader } from "@x402/fetch";
import { x402Client } from "@x402/core/client";
import { AuthCaptureEvmScheme } from "@x402/evm/auth-capture/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { env } from "../lib/env.mjs";
import { ok, equal, show } from "../lib/assert.mjs";

const base = env.baseURL;

for (const method of ["eip3009", "permit2"]) {
  const account = privateKeyToAccount(generatePrivateKey());
  const client = new x402Client()
    .register("eip155:84532", new AuthCaptureEvmScheme(account))
    .registerPolicy((_, reqs) => reqs.filter((r) => r.scheme === "auth-capture" && (r.extra?.assetTransferMethod ?? "eip3009") === method));
  const pay = wrapFetchWithPayment(fetch, client);
  const balance = async () => {
    const res = await fetch(`${base}/x402/escrow/balance/${account.address}`);
    const text = await res.text();
    equal(res.status, 200, `${method}: balance (body ${show(text)})`);
    return BigInt(JSON.parse(text).balance);
  };
  const start = await balance();
  for (const [claim, status, state, captured] of [
    ["17 * 3 = 51", "VALID", "captured", 5000n],
    ["17 * 3 = 52", "INVALID", "captured", 5000n],
  ]) {
    const what = `${method} ${status}`;
    const before = await balance();
    const res = await pay(`${base}/api/v4/x402/trust`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ mode: "validation", policy: "fast", task: { type: "tool_output", claimed_result: claim } }),
    });
    const text = await res.text();
    equal(res.status, 200, `${what}: status (body ${show(text)})`);
    equal(JSON.parse(text).status, status, `${what}: verdict`);
    const header = res.headers.get("payment-response");
    ok(header, `${what}: no PAYMENT-RESPONSE header`);
    const settled = decodePaymentResponseHeader(header);
    ok(settled.success === true, `${what}: settlement ${show(settled)}`);
    const report = settled.extensions?.["vouch-escrow"]?.info;
    ok(report, `${what}: no vouch-escrow report in ${show(settled)}`);
    equal(report.state, state, `${what}: state`);
    equal(report.verdict, status, `${what}: verdict recorded`);
    equal(report.held, "5000", `${what}: held`);
    equal(report.captured, String(captured), `${what}: captured`);
    equal(await balance(), before - captured, `${what}: the buyer's balance after the ${state === "captured" ? "capture" : "void"}`);
  }
  equal(await balance(), start - 10000n, `${method}: the buyer paid the two verdicts`);
}
