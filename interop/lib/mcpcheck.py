"""The Python MCP checks, on the official Python SDK (mcp): connect over
Streamable HTTP or stdio, once with the initialize handshake and once as
the SDK connects by default (server/discover), and exercise validate_claim
as a client of vouch would."""

from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

from vouchcheck import CheckFailed, equal, ok, show, step

# The tools examples/server lists.
TOOL_NAMES = ["arbitrate", "delegate_task", "factcheck", "get_receipt", "report_outcome", "validate_claim", "verify_receipt"]

# The SDK's ways to agree on a protocol version: "legacy" is the initialize
# handshake; "auto", its default, asks server/discover first and falls back
# to initialize only when the server does not answer it.
MODES = {
    "legacy": ("the initialize handshake", HANDSHAKE_PROTOCOL_VERSIONS),
    "auto": ("server/discover", MODERN_PROTOCOL_VERSIONS),
}


def text(res) -> str:
    """text is the first text content of a tool result."""
    return next((c.text for c in res.content if c.type == "text"), "")


async def exercise(client: Client, mode: str) -> None:
    """exercise checks the negotiated version, lists the tools and their
    schemas, calls validate_claim on a true and a false claim, and checks
    that a bad argument is a tool error naming it and an unknown tool the
    protocol error invalid params naming it."""
    how, versions = MODES[mode]
    ok(client.protocol_version in versions,
       f"mode {mode}: protocol version {client.protocol_version}, want one of {list(versions)} ({how})")
    info = client.server_info
    equal(info and info.name, "vouch demo server", f"mode {mode}: server name")

    with step(f"mode {mode}: tools/list"):
        tools = (await client.list_tools()).tools
    equal(sorted(t.name for t in tools), TOOL_NAMES, f"mode {mode}: tools/list")
    for t in tools:
        for kind, schema in (("input", t.input_schema), ("output", t.output_schema)):
            ok(isinstance(schema, dict) and schema.get("type") == "object" and isinstance(schema.get("properties"), dict),
               f"mode {mode}: {t.name}: {kind} schema {show(schema)}, want an object schema with properties")

    # The safe tier (3 runs, majority): one of the demo workers answers
    # wrong one call in three, which a single run would report. The SDK
    # validates each structured content against the tool's output schema.
    for claim, want in (("17 * 3 = 51", "VALID"), ("17 * 3 = 50", "INVALID")):
        args = {"claimed_result": claim, "policy": "safe"}
        with step(f"mode {mode}: validate_claim {show(args)}"):
            res = await client.call_tool("validate_claim", args)
        ok(not res.is_error, f"mode {mode}: validate_claim {show(args)}: tool error {show(text(res))}")
        out = res.structured_content
        ok(isinstance(out, dict), f"mode {mode}: validate_claim {show(args)}: no structured content in {show(text(res))}")
        equal(out.get("status"), want, f"mode {mode}: validate_claim {show(args)}: status")
        ok(isinstance(out.get("confidence"), (int, float)) and out.get("evidence"),
           f"mode {mode}: validate_claim {show(args)}: no confidence or evidence in {show(out)}")

    args = {"claimed_result": "17 * 3 = 51", "policy": "cheapest"}
    with step(f"mode {mode}: validate_claim {show(args)}"):
        res = await client.call_tool("validate_claim", args)
    ok(res.is_error, f"mode {mode}: validate_claim {show(args)}: answered {show(res.structured_content)}, want a tool error")
    ok("policy" in text(res),
       f"mode {mode}: validate_claim {show(args)}: the tool error {show(text(res))} does not name policy")

    try:
        res = await client.call_tool("no_such_tool", {})
    except MCPError as err:
        ok(err.code == -32602 and "no_such_tool" in err.error.message,
           f"mode {mode}: tools/call of no_such_tool: error {err.code} {show(err.error.message)}, "
           "want invalid params (-32602) naming no_such_tool")
    else:
        raise CheckFailed(f"mode {mode}: tools/call of no_such_tool: no error, got {show(text(res))}")
