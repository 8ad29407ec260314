// Small assertions whose message says what was wrong.
import { isDeepStrictEqual, inspect } from "node:util";

/** ok throws msg unless cond holds. */
export function ok(cond, msg) {
  if (!cond) throw new Error(msg);
}

/** equal throws unless got deep-equals want. */
export function equal(got, want, what) {
  if (!isDeepStrictEqual(got, want)) {
    throw new Error(`${what}: got ${show(got)}, want ${show(want)}`);
  }
}

/** show writes v on one line, cut to a readable length. */
export function show(v) {
  const s = typeof v === "string" ? JSON.stringify(v) : inspect(v, { depth: 6, breakLength: Infinity });
  return s.length > 400 ? s.slice(0, 400) + "…" : s;
}
