// The auth-capture vectors x402/evm's tests pin
// (x402/evm/testdata/authcapture_vectors.json) are what @x402/evm's
// auth-capture client, as package-lock.json pins it, makes today:
// authcapture-vectors.mjs is run again and its output compared.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { env } from "../lib/env.mjs";
import { equal, ok } from "../lib/assert.mjs";

const script = join(env.repo, "interop", "authcapture-vectors.mjs");
const fresh = JSON.parse(execFileSync(process.execPath, [script], { encoding: "utf8" }));
const pinned = JSON.parse(readFileSync(join(env.repo, "x402", "evm", "testdata", "authcapture_vectors.json"), "utf8"));
ok(pinned.vectors.length >= 6, `only ${pinned.vectors.length} vectors are pinned`);
equal(fresh.vectors.length, pinned.vectors.length, "number of vectors");
for (const [i, v] of pinned.vectors.entries()) {
  equal(fresh.vectors[i], v, `vector ${v.name}`);
}
equal(fresh, pinned, "the whole file");
