// The MCP TypeScript SDK over stdio (the server launched with -mcp-stdio,
// as an MCP host does): list every tool, call each, bad arguments, a
// receipt fetched and verified.
import { env } from "../lib/env.mjs";
import { connectStdio, exercise } from "../lib/mcp.mjs";

const client = await connectStdio(env.serverBin);
try {
  await exercise(client);
} finally {
  await client.close();
}
