// The x402 "payment-identifier" extension between vouch and the official
// TypeScript client: @x402/extensions' appendPaymentIdentifierToExtensions
// names the payment (in an onBeforePaymentCreation hook of @x402/core's
// client, as the x402 examples do), @x402/evm's auth-capture client pays
// vouch's trust call held in examples/server's offline escrow. A retry
// of the same payment (the same PAYMENT-SIGNATURE, as a client resends it
// after losing the response) gets the first response and PAYMENT-RESPONSE
// and is not charged again, as the buyer's balance in the escrow shows; a
// new payment under the same id is 409.
import { wrapFetchWithPayment, decodePaymentResponseHeader } from "@x402/fetch";
import { x402Client } from "@x402/core/client";
import { AuthCaptureEvmScheme } from "@x402/evm/auth-capture/client";
import { appendPaymentIdentifierToExtensions, generatePaymentId, PAYMENT_IDENTIFIER } from "@x402/extensions/payment-identifier";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { env } from "../lib/env.mjs";
import { ok, equal, show } from "../lib/assert.mjs";

const base = env.baseURL;
const url = `${base}/api/v4/x402/trust`;
const body = JSON.stringify({ mode: "validation", policy: "fast", task: { type: "tool_output", claimed_result: "17 * 3 = 51" } });

const unpaid = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body });
equal(unpaid.status, 402, "unpaid: status");
const terms = JSON.parse(Buffer.from(unpaid.headers.get("payment-required"), "base64").toString());
ok(terms.extensions?.[PAYMENT_IDENTIFIER]?.info?.required === false, `the terms offer ${PAYMENT_IDENTIFIER}: ${show(terms.extensions)}`);

const account = privateKeyToAccount(generatePrivateKey());
const id = generatePaymentId();
const client = new x402Client()
  .register("eip155:84532", new AuthCaptureEvmScheme(account))
  .registerPolicy((_, reqs) => reqs.filter((r) => r.scheme === "auth-capture" && (r.extra?.assetTransferMethod ?? "eip3009") === "eip3009"));
client.onBeforePaymentCreation(async ({ paymentRequired }) => {
  appendPaymentIdentifierToExtensions(paymentRequired.extensions ?? {}, id);
});
const sent = [];
const tap = (input, init) => {
  const req = new Request(input, init);
  const proof = req.headers.get("payment-signature");
  if (proof) sent.push(proof);
  return fetch(req);
};
const pay = wrapFetchWithPayment(tap, client);
const balance = async () => {
  const res = await fetch(`${base}/x402/escrow/balance/${account.address}`);
  const text = await res.text();
  equal(res.status, 200, `balance (body ${show(text)})`);
  return BigInt(JSON.parse(text).balance);
};

const start = await balance();
const first = await pay(url, { method: "POST", headers: { "Content-Type": "application/json" }, body });
const firstText = await first.text();
equal(first.status, 200, `first call: status (body ${show(firstText)})`);
const firstSettlement = first.headers.get("payment-response");
ok(firstSettlement, "first call: no PAYMENT-RESPONSE");
const report = decodePaymentResponseHeader(firstSettlement).extensions?.["vouch-escrow"]?.info;
equal(report?.state, "captured", `first call: escrow ${show(report)}`);
equal(sent.length, 1, "the client sent one payment");
const proof = JSON.parse(Buffer.from(sent[0], "base64").toString());
equal(proof.extensions?.[PAYMENT_IDENTIFIER]?.info?.id, id, "the payment carries the id");
equal(await balance(), start - 5000n, "the first call captured 5000");

// The response was lost: the client sends the same payment again.
const retry = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", "PAYMENT-SIGNATURE": sent[0] }, body });
const retryText = await retry.text();
equal(retry.status, 200, `retry: status (body ${show(retryText)})`);
equal(retryText, firstText, "retry: the first response's body");
equal(retry.headers.get("payment-response"), firstSettlement, "retry: the first PAYMENT-RESPONSE");
equal(await balance(), start - 5000n, "the retry charged nothing more");

// A new payment under the same id is a conflict.
const again = await pay(url, { method: "POST", headers: { "Content-Type": "application/json" }, body });
const againText = await again.text();
equal(again.status, 409, `a new payment under the same id: status (body ${show(againText)})`);
equal(await balance(), start - 5000n, "the conflicting payment charged nothing");
