// The x402 "upto" scheme between vouch and the official TypeScript SDK,
// both ways:
//
//  1. The official client (@x402/fetch with @x402/evm's upto scheme) pays
//     vouch's adaptive trust call, priced per run: it authorizes 5 runs
//     and is charged the runs the call launched, never more.
//  2. vouch's Transport (examples/paid-call -schemes upto) pays an
//     @x402/express route of the upto scheme, settled by the offline
//     facilitator the vouch server serves with -facilitator; the route
//     charges 1500 of an authorized 5000, and a Transport whose most per
//     call is below 5000 refuses to sign.
//
// It starts its own examples/server with -facilitator from
// VOUCH_SERVER_BIN when that is set (the interop runner's convention), or
// else uses the server at VOUCH_URL, which must run with -facilitator. It
// runs examples/paid-call from VOUCH_BIN_DIR when set, or else with
// "go run" in this repository. npm packages: @x402/fetch, @x402/evm,
// @x402/core, @x402/express, express and viem.
import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import assert from "node:assert/strict";
import express from "express";
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from "@x402/fetch";
import { UptoEvmScheme as UptoClient } from "@x402/evm/upto/client";
import { UptoEvmScheme as UptoServer } from "@x402/evm/upto/server";
import { paymentMiddleware, setSettlementOverrides, x402ResourceServer } from "@x402/express";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { privateKeyToAccount } from "viem/accounts";

const repo = process.env.VOUCH_REPO || fileURLToPath(new URL("../..", import.meta.url));
let server;
let base = process.env.VOUCH_URL;
if (process.env.VOUCH_SERVER_BIN) {
  // Its own server, with the offline facilitator served; the banner's
  // first line names the address.
  server = spawn(process.env.VOUCH_SERVER_BIN, ["-addr", "127.0.0.1:0", "-facilitator"], { stdio: ["ignore", "pipe", "ignore"] });
  base = await new Promise((resolve, reject) => {
    let out = "";
    server.stdout.on("data", d => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^\s]+)/);
      if (m) resolve(m[1]);
    });
    server.on("exit", code => reject(new Error(`examples/server exited with ${code} before listening`)));
  });
  server.stdout.resume();
}
assert.ok(base, "neither VOUCH_SERVER_BIN nor VOUCH_URL is set");
process.on("exit", () => server?.kill());
// The first development key of Hardhat and Anvil: public, worthless, and
// accepted by the offline facilitator of the demo server.
const devKey = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";

// 1. The official client pays vouch's adaptive trust call per run.
{
  const client = new x402Client().register("eip155:84532", new UptoClient(privateKeyToAccount(devKey)));
  const pay = wrapFetchWithPayment(fetch, client);
  const res = await pay(`${base}/api/v4/x402/trust`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ mode: "validation", policy: "adaptive", task: { input: "What is the capital of France?", claimed_result: "Paris" } }),
  });
  assert.equal(res.status, 200, `adaptive trust call: status ${res.status}: ${await res.clone().text()}`);
  const body = await res.json();
  const header = res.headers.get("payment-response");
  assert.ok(header, "no PAYMENT-RESPONSE on the paid answer");
  const settled = decodePaymentResponseHeader(header);
  const runs = body.evidence.launched;
  assert.ok(settled.success, "the settlement failed");
  assert.ok(runs >= 1 && runs <= 5, `launched ${runs} runs`);
  assert.equal(settled.amount, String(runs * 1000), `settled ${settled.amount} for ${runs} runs at 1000`);
  const usage = settled.extensions?.["vouch-usage"]?.info;
  assert.deepEqual(usage, { amount: String(runs * 1000), units: runs, unit: "run", maxAmount: "5000" });
  console.log(`official client -> vouch: adaptive ran ${runs} runs, settled ${settled.amount} of an authorized 5000`);
}

// 2. vouch's Transport pays an @x402/express upto route.
{
  const supported = await fetch(`${base}/x402/facilitator/supported`);
  assert.equal(supported.status, 200, "the vouch server does not serve its facilitator: start it with -facilitator");
  const app = express();
  app.use(paymentMiddleware(
    { "GET /api/generate": { accepts: { scheme: "upto", price: "$0.005", network: "eip155:84532", payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C" }, description: "metered generation" } },
    new x402ResourceServer(new HTTPFacilitatorClient({ url: `${base}/x402/facilitator` })).register("eip155:84532", new UptoServer()),
  ));
  app.get("/api/generate", (req, res) => {
    setSettlementOverrides(res, { amount: "1500" });
    res.json({ generated: "text" });
  });
  const server = await new Promise(resolve => { const s = app.listen(0, "127.0.0.1", () => resolve(s)); });
  const url = `http://127.0.0.1:${server.address().port}/api/generate`;
  const callArgs = ["-url", url, "-method", "GET", "-data", "", "-network", "eip155:84532", "-schemes", "upto"];
  const paidCall = args => process.env.VOUCH_BIN_DIR
    ? promisify(execFile)(`${process.env.VOUCH_BIN_DIR}/paid-call`, [...callArgs, ...args])
    : promisify(execFile)("go", ["run", "./examples/paid-call", ...callArgs, ...args], { cwd: repo });
  try {
    const { stdout } = await paidCall(["-max", "$0.01"]);
    assert.match(stdout, /status: 200 OK/);
    const settlement = JSON.parse(stdout.slice(stdout.indexOf("settlement:") + "settlement:".length));
    assert.equal(settlement.success, true);
    assert.equal(settlement.amount, "1500", `settled ${settlement.amount}, want the 1500 the route charged`);
    console.log(`vouch Transport -> @x402/express: authorized 5000, settled ${settlement.amount}`);

    const refused = await paidCall(["-max", "$0.004"]).then(() => null, err => err);
    assert.ok(refused, "a Transport allowed 4000 a call signed an upto maximum of 5000");
    assert.match(refused.stderr + refused.stdout, /above the limit of 4000/);
    console.log("vouch Transport refuses an upto maximum above its policy");
  } finally {
    server.close();
  }
}

server?.kill();
