// The MCP TypeScript SDK over Streamable HTTP, on the server with
// -mcp-paid: the payment-required result passes the SDK's validation, and
// @x402/evm pays in _meta["x402/payment"].
import { env } from "../lib/env.mjs";
import { connectHTTP, paidCall } from "../lib/mcp.mjs";

const client = await connectHTTP(env.paidBaseURL, env.apiKey);
try {
  await paidCall(client);
} finally {
  await client.close();
}
