// The x402 "auth-capture" scheme (escrow) over the MCP paid tools: the MCP
// TypeScript SDK client, over Streamable HTTP on the server with
// -mcp-paid, pays validate_claim in _meta["x402/payment"] with
// @x402/evm's auth-capture client, by each asset-transfer method (ERC-3009
// receiveWithAuthorization and Permit2). A delivered answer (VALID) is
// captured (5000) with the report in _meta["x402/payment-response"], the
// same payment sent again gets the same answer and settlement and moves
// nothing, and a tool error (a bad argument) voids the hold: the buyer's
// balance in the server's offline escrow (GET
// /x402/escrow/balance/{address}) is back where it was before it.
import { x402Client } from "@x402/core/client";
import { AuthCaptureEvmScheme } from "@x402/evm/auth-capture/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { env } from "../lib/env.mjs";
import { ok, equal, show } from "../lib/assert.mjs";
import { connectHTTP, listTools, paymentRequired, text } from "../lib/mcp.mjs";

const base = env.paidBaseURL;
const c = await connectHTTP(base, env.apiKey);
try {
  await listTools(c); // so that the SDK validates the results against the output schemas
  for (const method of ["eip3009", "permit2"]) {
    const account = privateKeyToAccount(generatePrivateKey());
    const x402 = new x402Client()
      .register("eip155:84532", new AuthCaptureEvmScheme(account))
      .registerPolicy((_, reqs) => reqs.filter((r) => r.scheme === "auth-capture" && (r.extra?.assetTransferMethod ?? "eip3009") === method));
    const balance = async () => {
      const res = await fetch(`${base}/x402/escrow/balance/${account.address}`);
      const body = await res.text();
      equal(res.status, 200, `${method}: balance (body ${show(body)})`);
      return BigInt(JSON.parse(body).balance);
    };
    const start = await balance();
    for (const [args, state, verdict, captured] of [
      [{ claimed_result: "17 * 3 = 51", policy: "safe" }, "captured", "VALID", 5000n],
      [{ claimed_result: "17 * 3 = 51", policy: "cheapest" }, "voided", "failed", 0n],
    ]) {
      const what = `${method} ${state}`;
      const unpaid = await c.callTool({ name: "validate_claim", arguments: args });
      const terms = paymentRequired(unpaid);
      ok(terms, `${what}: no x402 terms in ${show(unpaid)}`);
      const payment = await x402.createPaymentPayload(terms);
      equal(payment.accepted.scheme, "auth-capture", `${what}: the scheme paid`);
      const before = await balance();
      const meta = { "x402/payment": payment };
      const res = await c.callTool({ name: "validate_claim", arguments: args, _meta: meta });
      equal(Boolean(res.isError), state === "voided", `${what}: isError (text ${show(text(res))})`);
      if (state === "captured") equal(res.structuredContent.status, "VALID", `${what}: the answer's status`);
      const settled = res._meta && res._meta["x402/payment-response"];
      ok(settled && settled.success === true, `${what}: settlement ${show(settled)}`);
      const report = settled.extensions?.["vouch-escrow"]?.info;
      ok(report, `${what}: no vouch-escrow report in ${show(settled)}`);
      equal(report.state, state, `${what}: state`);
      equal(report.verdict, verdict, `${what}: verdict recorded`);
      equal(report.held, "5000", `${what}: held`);
      equal(report.captured, String(captured), `${what}: captured`);
      equal(await balance(), before - captured, `${what}: the buyer's balance`);

      const again = await c.callTool({ name: "validate_claim", arguments: args, _meta: meta });
      equal(again._meta && again._meta["x402/payment-response"], settled, `${what}: the retry's settlement`);
      equal(again.structuredContent, res.structuredContent, `${what}: the retry's answer`);
      equal(await balance(), before - captured, `${what}: the buyer's balance after the retry`);
    }
    equal(await balance(), start - 5000n, `${method}: the buyer paid only the delivered answer`);
  }
} finally {
  await c.close();
}
