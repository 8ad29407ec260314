// The MCP TypeScript SDK over Streamable HTTP: list every tool, call each,
// bad arguments, a receipt fetched and verified.
import { env } from "../lib/env.mjs";
import { connectHTTP, exercise } from "../lib/mcp.mjs";

const client = await connectHTTP(env.baseURL, env.apiKey);
try {
  await exercise(client);
} finally {
  await client.close();
}
