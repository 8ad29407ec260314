// Runs one check: imports the module named on the command line, whose
// top-level code throws when the check fails. The last line of stderr is
// "why: <the reason on one line>" on a failure. The process then exits,
// whatever handles the check left open.
import { pathToFileURL } from "node:url";

const file = process.argv[2];
try {
  await import(pathToFileURL(file).href);
  process.exit(0);
} catch (err) {
  const why = (err && err.message) || String(err);
  console.error(err && err.stack ? err.stack : why);
  console.error("why: " + why.replace(/\s+/g, " ").trim());
  process.exit(1);
}
