// A receipt verifies with no vouch code at all: Node's own Ed25519 over the
// RFC 8785 canonical form that erdtman's canonicalize (the RFC authors'
// JavaScript implementation) writes, and its task hashes are the SHA-256
// of the canonical JSON of the input and the claimed result, as
// receipt/doc.go says. The same holds for the detached receipt fetched
// with GET /api/v4/receipt/{id}; a receipt whose decision is edited, or
// whose issuer is another key, does not verify.
import { createHash, createPublicKey, verify } from "node:crypto";
import canonicalize from "canonicalize";
import { env } from "../lib/env.mjs";
import { ok, equal, show } from "../lib/assert.mjs";

const headers = { Authorization: `Bearer ${env.apiKey}`, "Content-Type": "application/json" };

// The input and claimed result, written as a client might: numbers in a
// form that is not canonical (1.50, 1E3), members out of order.
const input = '{"question":"sum the prices","prices":[1.50,1E3]}';
const claimed = '{"total":1001.5,"currency":"USD"}';

/** trustCall makes a validation with the receipt block given, and returns the answer's body. */
async function trustCall(receipt) {
  const res = await fetch(new URL("/api/v4/trust", env.baseURL), {
    method: "POST", headers,
    body: `{"mode":"validation","policy":"safe","task":{"type":"tool_output","input":${input},"claimed_result":${claimed}},"receipt":${JSON.stringify(receipt)}}`,
  });
  const body = await res.text();
  equal(res.status, 200, `trust call: status (body ${show(body)})`);
  return JSON.parse(body);
}

const sha256 = (text) => "sha256:" + createHash("sha256").update(text, "utf8").digest("hex");

/** signedBytes returns the bytes the issuer signed: the canonical receipt with an empty signature. */
function signedBytes(receipt) {
  return Buffer.from(canonicalize({ ...receipt, signing: { ...receipt.signing, signature: "" } }), "utf8");
}

/** verifies reports whether receipt's signature verifies under its issuer's key. */
function verifies(receipt) {
  const { issuer, signature, signature_scheme: scheme } = receipt.signing;
  equal(scheme, "ed25519-jcs", "signature scheme");
  ok(issuer.startsWith("ed25519:"), `issuer ${issuer} is not an ed25519 key id`);
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: issuer.slice("ed25519:".length) }, format: "jwk" });
  return verify(null, signedBytes(receipt), key, Buffer.from(signature, "base64url"));
}

const include = { input_hash: true, output_hash: true, policy_snapshot: true, consensus_snapshot: true, router_trace_refs: true };

// Inline.
const inline = (await trustCall({ mode: "inline", include })).receipt;
ok(inline && inline.signing, `no signed inline receipt: ${show(inline)}`);
equal(inline.signing.issuer, env.issuer, "the receipt's issuer against the server's signing key");
ok(verifies(inline), "the inline receipt does not verify with Node's Ed25519 over its canonical form");
equal(inline.task_meta.input_hash, sha256(canonicalize(JSON.parse(input))), "input_hash against SHA-256 of the input's canonical JSON");
equal(inline.task_meta.output_hash, sha256(canonicalize(JSON.parse(claimed))), "output_hash against SHA-256 of the claimed result's canonical JSON");

// Detached, fetched by its id as the stored text.
const detached = await trustCall({ mode: "detached", include });
const id = detached.receipt && detached.receipt.receipt_id;
ok(id, `no receipt id in the detached call's answer: ${show(detached.receipt)}`);
const got = await fetch(new URL(`/api/v4/receipt/${id}`, env.baseURL), { headers });
const text = await got.text();
equal(got.status, 200, `GET /api/v4/receipt/${id}: status (body ${show(text)})`);
const fetched = JSON.parse(text);
ok(verifies(fetched), "the fetched receipt does not verify");
equal(text.trim(), canonicalize(fetched), "the fetched text is not its own canonical form, as issued");

// Edited, it no longer verifies: the decision, or the issuer.
const edited = structuredClone(inline);
edited.decision.status = edited.decision.status === "VALID" ? "INVALID" : "VALID";
ok(!verifies(edited), "a receipt whose status was edited still verifies");
const reissued = structuredClone(inline);
reissued.signing.issuer = "ed25519:" + Buffer.alloc(32, 7).toString("base64url");
ok(!verifies(reissued), "a receipt verifies under another issuer's key");
