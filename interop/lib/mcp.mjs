// The MCP checks, on the official TypeScript SDK: connect over Streamable
// HTTP or stdio, and exercise every tool as a client of vouch would.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { ok, equal, show } from "./assert.mjs";
import { payer } from "./x402.mjs";

/** The tools examples/server lists. */
export const toolNames = ["arbitrate", "delegate_task", "factcheck", "get_receipt", "report_outcome", "validate_claim", "verify_receipt"];

const client = () => new Client({ name: "vouch-interop", version: "1.0.0" });

/** connectHTTP connects to the server's /mcp with the API key. */
export async function connectHTTP(baseURL, apiKey) {
  const c = client();
  await c.connect(new StreamableHTTPClientTransport(new URL("/mcp", baseURL), {
    requestInit: { headers: { Authorization: `Bearer ${apiKey}` } },
  }));
  return c;
}

/**
 * connectStdio launches the server binary with -mcp-stdio and the extra
 * flags, and connects to it; its log goes to this process's stderr.
 */
export async function connectStdio(serverBin, flags = []) {
  const c = client();
  const transport = new StdioClientTransport({
    command: serverBin,
    args: ["-mcp-stdio", ...flags],
    stderr: "inherit",
  });
  await c.connect(transport);
  return c;
}

// The keywords of JSON Schema whose value is a schema, a list or a map of
// schemas.
const schemaKeys = ["additionalProperties", "additionalItems", "items", "not", "if", "then", "else", "contains",
  "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"];
const schemaListKeys = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
const schemaMapKeys = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/** booleanSchemas lists the paths of the schemas under s that are not objects. */
export function booleanSchemas(s, path = "#") {
  if (s === null || typeof s !== "object" || Array.isArray(s)) return [`${path} = ${JSON.stringify(s)}`];
  const found = [];
  for (const k of schemaKeys) if (k in s && !Array.isArray(s[k])) found.push(...booleanSchemas(s[k], `${path}/${k}`));
  for (const k of schemaListKeys) if (Array.isArray(s[k])) s[k].forEach((c, i) => found.push(...booleanSchemas(c, `${path}/${k}/${i}`)));
  for (const k of schemaMapKeys) {
    if (s[k] && typeof s[k] === "object") for (const [n, c] of Object.entries(s[k])) found.push(...booleanSchemas(c, `${path}/${k}/${n}`));
  }
  return found;
}

/** listTools lists the tools (the SDK validates the list) and checks their schemas. */
export async function listTools(c) {
  const { tools } = await c.listTools();
  equal(tools.map((t) => t.name).sort(), toolNames, "tools/list");
  for (const t of tools) {
    ok(t.outputSchema, `${t.name}: no output schema`);
    for (const [kind, s] of [["input", t.inputSchema], ["output", t.outputSchema]]) {
      const bad = booleanSchemas(s);
      ok(bad.length === 0, `${t.name}: ${kind} schema has boolean schemas: ${bad.join(", ")}`);
    }
  }
  return tools;
}

/** text is the first text content of a tool result. */
export function text(res) {
  const c = (res.content || []).find((c) => c.type === "text");
  return c ? c.text : "";
}

/**
 * call calls a tool that must succeed: the SDK validates its structured
 * content against the tool's output schema; it returns the structured
 * content.
 */
export async function call(c, name, args, meta) {
  const res = await c.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) });
  ok(!res.isError, `${name} ${show(args)}: tool error ${show(text(res))}`);
  ok(res.structuredContent, `${name}: no structured content`);
  return { res, out: res.structuredContent };
}

/** badArgument calls a tool with a bad argument and checks that the tool error names it. */
export async function badArgument(c, name, args, argument) {
  const res = await c.callTool({ name, arguments: args });
  ok(res.isError, `${name} ${show(args)}: not a tool error: ${show(res)}`);
  ok(text(res).includes(argument), `${name} ${show(args)}: the tool error ${show(text(res))} does not name ${argument}`);
}

/**
 * unknownTool calls a tool the server does not list and checks that the
 * SDK throws the protocol error invalid params (−32602) naming it.
 */
export async function unknownTool(c, name) {
  let res;
  try {
    res = await c.callTool({ name, arguments: {} });
  } catch (err) {
    ok(err instanceof McpError && err.code === ErrorCode.InvalidParams && err.message.includes(name),
      `tools/call of ${name}: got ${show(err)}, want McpError ${ErrorCode.InvalidParams} naming ${name}`);
    return;
  }
  throw new Error(`tools/call of ${name}: no error, got ${show(res)}`);
}

/**
 * exercise calls every tool, checks each answer, reports a call's true
 * verdict and its outcome, fetches and verifies a receipt (and refuses it
 * edited), and checks that bad arguments are tool errors naming the
 * argument, for every tool, and that an unknown tool is invalid params.
 */
export async function exercise(c) {
  await listTools(c);
  // The safe tier (3 runs, majority): one of the demo workers answers
  // wrong one call in three, which a single run (fast) would report.
  const claim = { claimed_result: "17 * 3 = 51", policy: "safe" };

  const v = (await call(c, "validate_claim", { ...claim, receipt: "detached" })).out;
  equal(v.status, "VALID", "validate_claim status");
  const id = v.receipt && v.receipt.receipt_id;
  ok(/^rcpt_/.test(id || ""), `validate_claim: no receipt_id in ${show(v.receipt)}`);

  // The claim's true verdict, then the same report as an outcome.
  const verdict = (await call(c, "report_outcome", { receipt_id: id, verdict: "VALID" })).out;
  equal(verdict, { id, verdict: "VALID" }, "report_outcome by verdict");
  const right = (await call(c, "report_outcome", { receipt_id: id, right: true })).out;
  equal(right, { id, right: true }, "report_outcome by outcome");
  await badArgument(c, "report_outcome", { receipt_id: id, right: true, verdict: "VALID" }, "verdict");
  await badArgument(c, "report_outcome", { receipt_id: id, verdict: "MAYBE" }, "verdict");

  const d = (await call(c, "delegate_task", { objective: "What is 17 * 3?", policy: "safe" })).out;
  equal(d.status, "VALID", "delegate_task status");
  equal(d.result && d.result.value, 51, "delegate_task result value");

  const a = (await call(c, "arbitrate", { ...claim, dispute_context: "the buyer says 17 * 3 is not 51" })).out;
  equal(a.status, "SELLER_VALID", "arbitrate status");

  const f = (await call(c, "factcheck", { claim: "17 * 3 = 52" })).out;
  equal(f.verdict, "FALSE", "factcheck verdict");

  const r = (await call(c, "get_receipt", { receipt_id: id })).out;
  equal(r.receipt.receipt_id, id, "get_receipt receipt_id");
  equal(JSON.parse(r.receipt_json), r.receipt, "get_receipt receipt_json, parsed");

  // The receipt as this client parsed it, and as its exact text.
  for (const [what, receipt] of [["the object", r.receipt], ["its JSON text", r.receipt_json]]) {
    const vr = (await call(c, "verify_receipt", { receipt })).out;
    ok(vr.valid === true, `verify_receipt of ${what}: not valid: ${show(vr.checks)}`);
    equal(vr.receipt_id, id, `verify_receipt of ${what}: receipt_id`);
  }
  const edited = structuredClone(r.receipt);
  edited.decision.status = "INVALID";
  const vr = (await call(c, "verify_receipt", { receipt: edited })).out;
  ok(vr.valid === false, `verify_receipt of an edited receipt: valid`);
  const sig = vr.checks.find((k) => k.name === "signature");
  equal(sig && sig.status, "failed", "verify_receipt of an edited receipt: signature check");

  await badArgument(c, "validate_claim", { claimed_result: "17 * 3 = 51", policy: "cheapest" }, "policy");
  await badArgument(c, "validate_claim", { claimed_result: "17 * 3 = 51", tier: "fast" }, "tier");
  await badArgument(c, "validate_claim", { policy: "fast" }, "claimed_result");
  await badArgument(c, "factcheck", { claim: "17 * 3 = 51", replicas: 4 }, "replicas");
  await badArgument(c, "get_receipt", {}, "receipt_id");
  await badArgument(c, "delegate_task", { policy: "fast" }, "objective");
  await badArgument(c, "delegate_task", { objective: "What is 17 * 3?", policy: "cheapest" }, "policy");
  await badArgument(c, "arbitrate", { claimed_result: "17 * 3 = 51" }, "dispute_context");
  await badArgument(c, "verify_receipt", { receipt: 5 }, "receipt");
  await badArgument(c, "report_outcome", { verdict: "VALID" }, "receipt_id");
  await unknownTool(c, "no_such_tool");
}

/**
 * paymentRequired reads the x402 terms of a tool result that asks for
 * payment, where the x402 MCP transport puts them: structuredContent,
 * structuredContent["x402/error"].data, or content[0].text (the terms, or
 * the x402/error wrapper).
 */
export function paymentRequired(res) {
  const isTerms = (v) => v && typeof v === "object" && typeof v.x402Version === "number" && Array.isArray(v.accepts);
  const sc = res.structuredContent;
  if (isTerms(sc)) return sc;
  if (sc && isTerms(sc["x402/error"] && sc["x402/error"].data)) return sc["x402/error"].data;
  let parsed;
  try {
    parsed = JSON.parse(text(res));
  } catch {
    return undefined;
  }
  if (isTerms(parsed)) return parsed;
  const wrapped = parsed && parsed["x402/error"];
  if (wrapped && wrapped.code === 402 && isTerms(wrapped.data)) return wrapped.data;
  return undefined;
}

/**
 * paidCall calls validate_claim on a server with -mcp-paid: unpaid, it
 * gets the terms (and the SDK's validation of the result passes); paid
 * with @x402/evm in _meta["x402/payment"], it gets the answer and the
 * settlement in _meta["x402/payment-response"]; the same payment sent
 * again for the same call gets the kept answer and the first settlement.
 */
export async function paidCall(c) {
  await listTools(c); // so that the SDK validates the results against the output schemas
  const args = { claimed_result: "17 * 3 = 51", policy: "safe" };
  const unpaid = await c.callTool({ name: "validate_claim", arguments: args });
  ok(unpaid.isError, `unpaid validate_claim ran: ${show(unpaid)}`);
  const terms = paymentRequired(unpaid);
  ok(terms, `unpaid validate_claim: no x402 terms in ${show(unpaid)}`);
  equal(terms.x402Version, 2, "terms x402Version");
  equal(terms.resource && terms.resource.url, "mcp://tool/validate_claim", "terms resource.url");

  const { client: x402 } = payer();
  const payment = await x402.createPaymentPayload(terms);
  const meta = { "x402/payment": payment };
  const { res, out } = await call(c, "validate_claim", args, meta);
  equal(out.status, "VALID", "paid validate_claim status");
  const settled = res._meta && res._meta["x402/payment-response"];
  ok(settled && settled.success === true, `paid validate_claim: settlement ${show(settled)}`);
  equal(settled.network, terms.accepts[0].network, "settlement network");

  const again = await call(c, "validate_claim", args, meta);
  equal(again.res._meta["x402/payment-response"], settled, "the retry's settlement");
  equal(again.out, out, "the retry's answer");
}
