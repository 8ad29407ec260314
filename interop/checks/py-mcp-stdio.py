"""The MCP Python SDK (mcp) over stdio, the server launched with
-mcp-stdio as an MCP host launches it: the same steps as py-mcp-http, with
the initialize handshake, then as the SDK connects by default
(server/discover)."""

import asyncio

from mcp import Client, StdioServerParameters

from mcpcheck import MODES, exercise
from vouchcheck import need, step


async def main() -> None:
    server = StdioServerParameters(command=need("VOUCH_SERVER_BIN"), args=["-mcp-stdio"])
    for mode in MODES:
        with step(f"MCP over stdio ({server.command} -mcp-stdio), mode {mode}"):
            async with Client(server, mode=mode) as client:
                await exercise(client, mode)


asyncio.run(main())
