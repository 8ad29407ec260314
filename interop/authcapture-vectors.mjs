// Prints the auth-capture vectors that x402/evm's tests pin: payment
// payloads that @x402/evm's own auth-capture client makes for fixed
// requirements, a fixed key, a fixed clock and fixed random bytes. The
// payer-agnostic PaymentInfo hash is the authorization's nonce (a bytes32
// for ERC-3009, its decimal uint256 for Permit2), so vouch's derivation is
// held to the official client's, and its signatures to the client's bytes.
//
//   node interop/authcapture-vectors.mjs > x402/evm/testdata/authcapture_vectors.json
//
// checks/authcapture-vectors.mjs runs it in CI and compares the output
// with the committed file.
import { AuthCaptureEvmScheme } from "@x402/evm/auth-capture/client";
import { privateKeyToAccount } from "viem/accounts";

const key = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318";
const now = 1_800_000_000; // seconds
const usdc = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"; // USDC on Base Sepolia

// Routes without a receiver authorizer relay no lifecycle, so they write
// captureMode "deferred" out, as the binding requires.
//
// The clock and the random source the client reads, fixed: Date.now for
// preApprovalExpiry, crypto.getRandomValues for the salt (or saltNonce).
Date.now = () => now * 1000;
let fill = 0;
Object.defineProperty(globalThis.crypto, "getRandomValues", {
  value: (bytes) => {
    for (let i = 0; i < bytes.length; i++) bytes[i] = (fill + i * 7) & 0xff;
    return bytes;
  },
});

const base = {
  scheme: "auth-capture",
  network: "eip155:84532",
  amount: "1000000",
  asset: usdc,
  payTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
  maxTimeoutSeconds: 60,
};
const extra = {
  name: "USDC",
  version: "2",
  captureAuthorizer: "0x0000000000000000000000000000000000FaC402",
  operatorType: "delegated",
  paymentFlow: "escrow",
  captureDeadline: now + 3600,
  refundDeadline: now + 7 * 86400,
  feeRecipient: "0x0000000000000000000000000000000000000000",
  minFeeBps: 0,
  maxFeeBps: 0,
};
const receiverAuthorizer = "0x8D9E4a7b1c2F3e4D5a6B7c8D9e0F1a2B3c4D5e6F".toLowerCase();

const cases = [
  { name: "eip3009-unbound", extra: { captureMode: "deferred" } },
  { name: "eip3009-bound", extra: { receiverAuthorizer } },
  { name: "eip3009-fees", extra: { receiverAuthorizer, feeRecipient: "0x00000000000000000000000000000000000fee01", minFeeBps: 100, maxFeeBps: 250 }, amount: "2500" },
  { name: "eip3009-v1.0", extra: { authCaptureEscrow: "0xBdEA0D1bcC5966192B070Fdf62aB4EF5b4420cff", captureMode: "deferred" } },
  { name: "permit2-unbound", extra: { assetTransferMethod: "permit2", captureMode: "deferred" } },
  { name: "permit2-bound", extra: { assetTransferMethod: "permit2", receiverAuthorizer } },
];

const account = privateKeyToAccount(key);
const client = new AuthCaptureEvmScheme(account);
const out = { client: "@x402/evm 2.27.0", key, payer: account.address, now, vectors: [] };
for (const [i, c] of cases.entries()) {
  fill = i + 1;
  const requirements = { ...base, amount: c.amount ?? base.amount, extra: { ...extra, ...c.extra } };
  const { payload } = await client.createPaymentPayload(2, requirements);
  out.vectors.push({ name: c.name, requirements, payload });
}
process.stdout.write(JSON.stringify(out, null, 2) + "\n");
