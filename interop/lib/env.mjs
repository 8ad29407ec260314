// The environment run.sh gives every check (see ../README.md).

/**
 * need returns the environment variable name, and throws when run.sh did
 * not set it.
 */
export function need(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the check through interop/run.sh`);
  return v;
}

/** The servers run.sh started, and what the checks may use. */
export const env = {
  /** Base URL of examples/server (no -mcp-paid). */
  get baseURL() { return need("VOUCH_BASE_URL"); },
  /** Base URL of examples/server started with -mcp-paid. */
  get paidBaseURL() { return need("VOUCH_PAID_BASE_URL"); },
  /** The API key of both servers (Authorization: Bearer KEY). */
  get apiKey() { return need("VOUCH_API_KEY"); },
  /** HOST:PORT of -metrics-addr and -debug-addr of both servers. */
  get metricsAddr() { return need("VOUCH_METRICS_ADDR"); },
  get debugAddr() { return need("VOUCH_DEBUG_ADDR"); },
  get paidMetricsAddr() { return need("VOUCH_PAID_METRICS_ADDR"); },
  get paidDebugAddr() { return need("VOUCH_PAID_DEBUG_ADDR"); },
  /** The examples/server binary, for a check that starts its own. */
  get serverBin() { return need("VOUCH_SERVER_BIN"); },
  /** The directory of every examples/... binary. */
  get binDir() { return need("VOUCH_BIN_DIR"); },
  /** The receipts' signing key file of both servers, and its public form. */
  get signingKey() { return need("VOUCH_SIGNING_KEY"); },
  get trustedKeys() { return need("VOUCH_TRUSTED_KEYS"); },
  /** The issuer (ed25519:...) that signs both servers' receipts. */
  get issuer() { return need("VOUCH_ISSUER"); },
  /** A fresh directory for this check's files. */
  get checkDir() { return need("VOUCH_CHECK_DIR"); },
  /** The repository's root. */
  get repo() { return need("VOUCH_REPO"); },
  /** The promtool binary. */
  get promtool() { return need("VOUCH_PROMTOOL"); },
};
