// The x402 "upto" scheme between vouch and the official TypeScript SDK,
// both ways:
//
//  1. The official client (@x402/fetch with @x402/evm's upto scheme) pays
//     vouch's adaptive trust call, priced per run: it authorizes 5 runs
//     and is charged the runs the call launched, as the payment response's
//     vouch-usage counts them.
//  2. vouch's Transport (examples/paid-call -schemes upto) pays an
//     @x402/express route of the upto scheme, settled by the offline
//     facilitator that examples/server serves with -facilitator: the route
//     charges 1500 of an authorized 5000. A Transport whose most per call
//     is below 5000 refuses to sign.
//
// It starts its own examples/server (VOUCH_SERVER_BIN) with -facilitator.
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import express from "express";
import { wrapFetchWithPayment, decodePaymentResponseHeader } from "@x402/fetch";
import { x402Client } from "@x402/core/client";
import { UptoEvmScheme as UptoClient } from "@x402/evm/upto/client";
import { UptoEvmScheme as UptoServer } from "@x402/evm/upto/server";
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from "@x402/express";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { env } from "../lib/env.mjs";
import { ok, equal, show } from "../lib/assert.mjs";

// examples/server with its offline facilitator served; the banner's first
// line names the address.
const server = spawn(env.serverBin, ["-addr", "127.0.0.1:0", "-facilitator"], { stdio: ["ignore", "pipe", "ignore"] });
process.on("exit", () => server.kill());
const base = await new Promise((resolve, reject) => {
  let out = "";
  server.stdout.on("data", (d) => {
    out += d;
    const m = out.match(/listening on (http:\/\/[^\s]+)/);
    if (m) resolve(m[1]);
  });
  server.on("exit", (code) => reject(new Error(`examples/server -facilitator exited with ${code} before listening`)));
});

// 1. The official client pays vouch's adaptive trust call per run.
{
  const client = new x402Client().register("eip155:84532", new UptoClient(privateKeyToAccount(generatePrivateKey())));
  const pay = wrapFetchWithPayment(fetch, client);
  const res = await pay(`${base}/api/v4/x402/trust`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ mode: "validation", policy: "adaptive", task: { type: "tool_output", claimed_result: "17 * 3 = 51" } }),
  });
  const text = await res.text();
  equal(res.status, 200, `adaptive trust call: status (body ${show(text)})`);
  const runs = JSON.parse(text).evidence.launched;
  const header = res.headers.get("payment-response");
  ok(header, "adaptive trust call: no PAYMENT-RESPONSE header");
  const settled = decodePaymentResponseHeader(header);
  ok(settled.success === true, `adaptive trust call: settlement ${show(settled)}`);
  ok(runs >= 1 && runs <= 5, `adaptive trust call: launched ${runs} runs`);
  equal(settled.amount, String(runs * 1000), `adaptive trust call: amount settled for ${runs} runs at 1000`);
  equal(settled.extensions?.["vouch-usage"]?.info, { amount: String(runs * 1000), units: runs, unit: "run", maxAmount: "5000" }, "adaptive trust call: vouch-usage");
}

// 2. vouch's Transport pays an @x402/express upto route.
{
  const app = express();
  app.use(paymentMiddleware(
    { "GET /api/generate": { accepts: { scheme: "upto", price: "$0.005", network: "eip155:84532", payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C" }, description: "metered generation" } },
    new x402ResourceServer(new HTTPFacilitatorClient({ url: `${base}/x402/facilitator` })).register("eip155:84532", new UptoServer()),
  ));
  app.get("/api/generate", (req, res) => {
    setSettlementOverrides(res, { amount: "1500" });
    res.json({ generated: "text" });
  });
  const site = await new Promise((resolve) => { const s = app.listen(0, "127.0.0.1", () => resolve(s)); });
  const url = `http://127.0.0.1:${site.address().port}/api/generate`;
  const paidCall = (max) => promisify(execFile)(`${env.binDir}/paid-call`,
    ["-url", url, "-method", "GET", "-data", "", "-network", "eip155:84532", "-schemes", "upto", "-max", max]);
  try {
    const { stdout } = await paidCall("$0.01");
    ok(/status: 200 OK/.test(stdout), `paid-call: ${show(stdout)}`);
    const settlement = JSON.parse(stdout.slice(stdout.indexOf("settlement:") + "settlement:".length));
    ok(settlement.success === true, `paid-call: settlement ${show(settlement)}`);
    equal(settlement.amount, "1500", "paid-call: amount the express route settled");

    const refused = await paidCall("$0.004").then(() => null, (err) => err);
    ok(refused, "paid-call allowed 4000 a call signed an upto maximum of 5000");
    ok(/above the limit of 4000/.test(refused.stderr + refused.stdout), `paid-call refusal: ${show(refused.stderr + refused.stdout)}`);
  } finally {
    site.close();
  }
}
server.kill();
