// The MCP TypeScript SDK over stdio with -mcp-paid: a paid call, paid
// with @x402/evm.
import { env } from "../lib/env.mjs";
import { connectStdio, paidCall } from "../lib/mcp.mjs";

const client = await connectStdio(env.serverBin, ["-mcp-paid"]);
try {
  await paidCall(client);
} finally {
  await client.close();
}
