// The receipts log checks out with no vouch code: its checkpoints are C2SP
// signed notes (tlog-checkpoint bodies) whose Ed25519 signature, key id and
// verifier key are checked here as the C2SP specifications write them; a
// receipt's inclusion proof leads, by RFC 9162's algorithm over SHA-256,
// from the receipt as fetched to the root of its signed checkpoint; and
// the consistency proof between two checkpoints, taken before and after
// more receipts, shows the log only grew. Each check is also made to fail:
// another leaf, another old root, an edited checkpoint.
import { createHash, createPublicKey, verify } from "node:crypto";
import { env } from "../lib/env.mjs";
import { ok, equal, show } from "../lib/assert.mjs";

const headers = { Authorization: `Bearer ${env.apiKey}`, "Content-Type": "application/json" };

async function get(path) {
  const res = await fetch(new URL(path, env.baseURL), { headers });
  const text = await res.text();
  equal(res.status, 200, `GET ${path}: status (body ${show(text)})`);
  return text;
}

/** issue makes a trust call with a detached receipt and returns its id. */
async function issue() {
  const res = await fetch(new URL("/api/v4/trust", env.baseURL), {
    method: "POST", headers,
    body: JSON.stringify({ mode: "validation", policy: "fast", task: { type: "tool_output", claimed_result: "17 * 3 = 51" }, receipt: { mode: "detached" } }),
  });
  const body = await res.json();
  equal(res.status, 200, `trust call: status (body ${show(body)})`);
  return body.receipt.receipt_id;
}

const sha256 = (...parts) => createHash("sha256").update(Buffer.concat(parts)).digest();
const leafHash = (leaf) => sha256(Buffer.from([0x00]), leaf);
const nodeHash = (l, r) => sha256(Buffer.from([0x01]), l, r);

/**
 * verifierKey reads a note verifier key, "<name>+<key id, 8 hex>+<base64 of
 * 0x01 and the Ed25519 key>", and checks that its id is the first four
 * bytes of SHA-256(name, "\n", 0x01, key).
 */
function verifierKey(vkey) {
  // A name has no "+"; the base64 of the key may have some.
  const [name, id, ...rest] = vkey.split("+");
  const b64 = rest.join("+");
  const raw = Buffer.from(b64, "base64");
  equal(raw.length, 33, "verifier key: length of 0x01 and the key");
  equal(raw[0], 0x01, "verifier key: signature type (Ed25519)");
  const keyID = sha256(Buffer.from(name + "\n", "utf8"), raw).subarray(0, 4);
  equal(keyID.toString("hex"), id, "verifier key: its key id");
  return { name, keyID, key: raw.subarray(1) };
}

/**
 * openCheckpoint checks a signed note's signature by vk and returns its
 * checkpoint: the origin, the tree size and the root hash. A note is its
 * text, a blank line, and signature lines "— <name> <base64 of key id and
 * signature>"; the signature covers the text, its final newline included.
 */
function openCheckpoint(note, vk) {
  const cut = note.indexOf("\n\n");
  ok(cut > 0, `checkpoint: no blank line in ${show(note)}`);
  const text = note.slice(0, cut + 1);
  const sigs = note.slice(cut + 2).split("\n").filter((l) => l !== "");
  const mine = sigs.map((l) => l.match(/^— (\S+) (\S+)$/)).filter((m) => m && m[1] === vk.name);
  equal(mine.length, 1, `checkpoint: signature lines by ${vk.name} in ${show(sigs)}`);
  const sig = Buffer.from(mine[0][2], "base64");
  ok(sig.subarray(0, 4).equals(vk.keyID), "checkpoint: the signature's key id is not the verifier key's");
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: vk.key.toString("base64url") }, format: "jwk" });
  const valid = verify(null, Buffer.from(text, "utf8"), key, sig.subarray(4));
  const [origin, size, root] = text.split("\n");
  return { valid, origin, size: Number(size), root: Buffer.from(root, "base64") };
}

/** rootFromInclusion runs RFC 9162, 2.1.3.2: the root a proof leads to from leaf index of size leaves, or null. */
function rootFromInclusion(index, size, leaf, proof) {
  if (index >= size) return null;
  let fn = index, sn = size - 1, r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}

/** consistent runs RFC 9162, 2.1.4.2: whether proof shows the tree of size n2 and root r2 extends that of n1 and r1. */
function consistent(n1, r1, n2, r2, proof) {
  if (n1 === n2) return proof.length === 0 && r1.equals(r2);
  if (n1 === 0) return proof.length === 0;
  if (n1 > n2 || proof.length === 0) return false;
  const path = (n1 & (n1 - 1)) === 0 ? [r1, ...proof] : proof;
  let fn = n1 - 1, sn = n2 - 1;
  while (fn % 2 === 1) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
  let fr = path[0], sr = path[0];
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr); sr = nodeHash(c, sr);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) { fn = Math.floor(fn / 2); sn = Math.floor(sn / 2); }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2); sn = Math.floor(sn / 2);
  }
  return sn === 0 && fr.equals(r1) && sr.equals(r2);
}

// The log, and the key that signs it: the one that signs the receipts.
await issue(); // the log holds one receipt at least
const log = JSON.parse(await get("/api/v4/log"));
const vk = verifierKey(log.verifier_key);
equal("ed25519:" + vk.key.toString("base64url"), env.issuer, "the log's key against the receipts' issuer");
const before = openCheckpoint(log.checkpoint, vk);
ok(before.valid, "the log's checkpoint does not verify");
equal(before.origin, log.origin, "the checkpoint's origin");
ok(!openCheckpoint(log.checkpoint.replace(/\n(\d+)\n/, (_, n) => `\n${Number(n) + 1}\n`), vk).valid, "a checkpoint with its size edited verifies");

// A receipt's inclusion proof, from the receipt's bytes as fetched.
const id = await issue();
await issue();
const leaf = Buffer.from(await get(`/api/v4/receipt/${id}`), "utf8");
const proof = JSON.parse(await get(`/api/v4/receipt/${id}/proof`));
const cp = openCheckpoint(proof.checkpoint, vk);
ok(cp.valid, "the proof's checkpoint does not verify");
equal(cp.size, proof.tree_size, "the proof's tree size against its checkpoint's");
const path = proof.inclusion_proof.map((h) => Buffer.from(h, "base64"));
const root = rootFromInclusion(proof.log_index, proof.tree_size, leafHash(leaf), path);
ok(root && root.equals(cp.root), `the inclusion proof of leaf ${proof.log_index} of ${proof.tree_size} does not lead to the checkpoint's root`);
const other = rootFromInclusion(proof.log_index, proof.tree_size, leafHash(Buffer.concat([leaf, Buffer.from(" ")])), path);
ok(!(other && other.equals(cp.root)), "the proof leads another leaf to the root");

// The log only grew: the consistency proof from the first checkpoint to the latest.
const after = openCheckpoint(JSON.parse(await get("/api/v4/log")).checkpoint, vk);
ok(after.valid && after.size >= before.size + 2, `the latest checkpoint: ${after.size} leaves after ${before.size} and two receipts`);
const cons = JSON.parse(await get(`/api/v4/log/consistency?first=${before.size}&second=${after.size}`)).proof.map((h) => Buffer.from(h, "base64"));
ok(consistent(before.size, before.root, after.size, after.root, cons), `the consistency proof from ${before.size} to ${after.size} leaves does not check`);
ok(!consistent(before.size, sha256(Buffer.from("another tree")), after.size, after.root, cons), "the consistency proof checks from another old root");
