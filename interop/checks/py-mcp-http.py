"""The MCP Python SDK (mcp) over Streamable HTTP (/mcp, bearer key): with
the initialize handshake, then as the SDK connects by default
(server/discover), tools/list with every tool's input and output schema,
validate_claim on a true and a false claim read from the structured
content, a policy not in the list a tool error naming it, and an unknown
tool invalid params."""

import asyncio

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcpcheck import MODES, exercise
from vouchcheck import need, step


async def main() -> None:
    url = need("VOUCH_BASE_URL").rstrip("/") + "/mcp"
    for mode in MODES:
        # The key goes in the HTTP client the transport is given, as the SDK
        # documents for headers.
        headers = {"Authorization": f"Bearer {need('VOUCH_API_KEY')}"}
        with step(f"MCP over Streamable HTTP at {url}, mode {mode}"):
            async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60)) as http:
                async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                    await exercise(client, mode)


asyncio.run(main())
