// @x402/extensions reads the bazaar discovery extension of the x402 terms
// of every paid route that /api/v1/about lists: a 402 with
// Cache-Control: no-store, the resource's mimeType and description, and
// extensions.bazaar that the bazaar validates, naming the route's method
// and carrying the route's output schema.
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { validateDiscoveryExtension, validateDiscoveryExtensionSpec, extractDiscoveryInfoFromExtension } from "@x402/extensions/bazaar";
import { env } from "../lib/env.mjs";
import { ok, equal, show } from "../lib/assert.mjs";

const about = await (await fetch(new URL("/api/v1/about", env.baseURL))).json();
ok(Array.isArray(about.prices) && about.prices.length > 0, `/api/v1/about lists no paid route: ${show(about)}`);
for (const route of about.prices) {
  const what = `${route.method} ${route.path}`;
  const init = { method: route.method };
  if (route.method !== "GET" && route.method !== "HEAD") {
    init.headers = { "Content-Type": "application/json" };
    init.body = "{}";
  }
  const res = await fetch(new URL(route.path, env.baseURL), init);
  equal(res.status, 402, `${what}: status`);
  const cc = res.headers.get("cache-control") || "";
  ok(/\bno-store\b/.test(cc), `${what}: Cache-Control ${show(cc)}, want no-store`);
  const header = res.headers.get("payment-required");
  ok(header, `${what}: no PAYMENT-REQUIRED header`);
  const terms = decodePaymentRequiredHeader(header);
  ok(terms.resource && terms.resource.mimeType && terms.resource.description,
    `${what}: resource ${show(terms.resource)} lacks mimeType or description`);
  const ext = terms.extensions && terms.extensions.bazaar;
  ok(ext, `${what}: the terms carry no extensions.bazaar`);
  const valid = validateDiscoveryExtension(ext);
  ok(valid.valid, `${what}: bazaar extension invalid: ${show(valid.errors)}`);
  const spec = validateDiscoveryExtensionSpec(ext);
  ok(spec.valid, `${what}: bazaar extension against the spec: ${show(spec.errors)}`);
  const info = extractDiscoveryInfoFromExtension(ext);
  equal(info.input.type, "http", `${what}: bazaar info.input.type`);
  equal(info.input.method, route.method, `${what}: bazaar info.input.method`);
  // info.output (an example answer) is optional in the bazaar; the
  // route's output schema is what a discovery service lists.
  const outSchema = ext.schema && ext.schema.properties && ext.schema.properties.output;
  ok(outSchema && (outSchema.properties || outSchema.type), `${what}: the bazaar schema has no output schema: ${show(ext.schema)}`);
}
