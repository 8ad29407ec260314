"""The MCP Python SDK (mcp) over Streamable HTTP, on the server with
-mcp-paid, paid with the x402 Python SDK (x402): the unpaid validate_claim
is a tool error whose text carries the x402 terms, which the SDK reads from
the {"x402/error": ...} wrapper (version 2, resource mcp://tool/validate_claim,
an exact offer on an EVM network); the SDK's EVM exact client, signing with
a new eth-account key, pays them in _meta["x402/payment"], written by the
SDK's MCP encoder; the answer, VALID, comes with _meta["x402/payment-response"],
a settlement from that key's address of the offer the payment accepted;
the same payment for the same call gets the same answer and settlement
again. The client connects twice: with the initialize handshake, as the
MCP TypeScript SDK of mcp-http-paid does, and as the SDK connects by
default (server/discover, MCP 2026-07-28, whose tool results must say
they are complete: the terms of the unpaid call too)."""

import asyncio
import json

import httpx2
from eth_account import Account
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from x402 import x402Client
from x402.mcp.utils import attach_payment_to_meta, extract_payment_required_from_error
from x402.mechanisms.evm.exact.register import register_exact_evm_client
from x402.schemas import SettleResponse

from mcpcheck import text
from vouchcheck import CheckFailed, equal, need, ok, show, step

TOOL = "validate_claim"
# The safe tier (3 runs, majority): one of the demo workers answers wrong
# one call in three, which a single run would report.
ARGS = {"claimed_result": "17 * 3 = 51", "policy": "safe"}
PAYMENT = "x402/payment"
RESPONSE = "x402/payment-response"


def terms_of(res):
    """terms_of reads the x402 terms of a tool result that asks for payment:
    content[0].text is {"x402/error": {"code": 402, "message": ..., "data": <terms>}},
    whose inner object the SDK reads as a JSON-RPC error of code 402."""
    try:
        wrapped = json.loads(text(res)).get("x402/error")
    except (ValueError, AttributeError):
        wrapped = None
    ok(isinstance(wrapped, dict), f"unpaid {TOOL}: no x402/error in the text {show(text(res))}")
    terms = extract_payment_required_from_error(wrapped)
    ok(terms is not None, f"unpaid {TOOL}: the SDK reads no x402 terms (code 402 and data) in {show(wrapped)}")
    return terms


def settlement_of(res, what: str) -> SettleResponse:
    """settlement_of reads _meta["x402/payment-response"] of a paid result as the SDK's SettleResponse."""
    meta = res.meta or {}
    ok(isinstance(meta.get(RESPONSE), dict), f"{what}: no _meta[{RESPONSE!r}] in {show(meta)}")
    with step(f"{what}: reading _meta[{RESPONSE!r}]"):
        return SettleResponse.model_validate(meta[RESPONSE])


async def main() -> None:
    url = need("VOUCH_PAID_BASE_URL").rstrip("/") + "/mcp"
    headers = {"Authorization": f"Bearer {need('VOUCH_API_KEY')}"}
    with step(f"MCP over Streamable HTTP at {url}"):
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60)) as http:
            for mode, (how, versions) in MODES.items():
                with step(f"connected by {how}"):
                    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                        ok(client.protocol_version in versions,
                           f"protocol version {client.protocol_version}, want one of {list(versions)} ({how})")
                        await paid_call(client)


# The SDK's ways to agree on a protocol version: "legacy" is the initialize
# handshake; "auto", its default, asks server/discover first.
MODES = {
    "legacy": ("the initialize handshake", HANDSHAKE_PROTOCOL_VERSIONS),
    "auto": ("server/discover", MODERN_PROTOCOL_VERSIONS),
}


async def paid_call(client: Client) -> None:
    # Listed, the tools' output schemas are what the SDK validates each
    # structured content against.
    with step("tools/list"):
        tools = {t.name: t for t in (await client.list_tools()).tools}
    ok(TOOL in tools and tools[TOOL].output_schema, f"tools/list: no {TOOL} with an output schema in {show(sorted(tools))}")

    with step(f"unpaid {TOOL} {show(ARGS)}"):
        unpaid = await client.call_tool(TOOL, ARGS)
    ok(unpaid.is_error, f"unpaid {TOOL} ran: {show(unpaid.structured_content)}, want a tool error with the x402 terms")
    terms = terms_of(unpaid)
    equal(terms.x402_version, 2, f"unpaid {TOOL}: terms x402Version")
    equal(terms.resource and terms.resource.url, f"mcp://tool/{TOOL}", f"unpaid {TOOL}: terms resource.url")
    exact = [a for a in terms.accepts if a.scheme == "exact" and a.network.startswith("eip155:")]
    ok(exact, f"unpaid {TOOL}: no exact offer on an EVM network in {show([a.model_dump() for a in terms.accepts])}")

    account = Account.create()
    payer = register_exact_evm_client(x402Client(), account)
    with step(f"the x402 SDK paying the terms of {TOOL}"):
        payment = await payer.create_payment_payload(terms)
    equal(payment.x402_version, 2, "payment x402Version")
    ok(payment.accepted in terms.accepts and payment.accepted.scheme == "exact",
       f"payment accepted {show(payment.accepted.model_dump())}, want one of the terms' exact offers")
    meta = attach_payment_to_meta({}, payment)["_meta"]
    ok(isinstance(meta.get(PAYMENT), dict), f"the SDK's MCP encoder wrote no _meta[{PAYMENT!r}]: {show(meta)}")

    with step(f"paid {TOOL} {show(ARGS)}"):
        paid = await client.call_tool(TOOL, ARGS, meta=meta)
    ok(not paid.is_error, f"paid {TOOL}: tool error {show(text(paid))}")
    answer = paid.structured_content
    ok(isinstance(answer, dict), f"paid {TOOL}: no structured content in {show(text(paid))}")
    equal(answer.get("status"), "VALID", f"paid {TOOL}: status")
    settled = settlement_of(paid, f"paid {TOOL}")
    ok(settled.success, f"paid {TOOL}: settlement {show(settled.model_dump())}, want success")
    equal((settled.payer or "").lower(), account.address.lower(), f"paid {TOOL}: settlement payer")
    equal(settled.network, payment.accepted.network, f"paid {TOOL}: settlement network")
    equal(settled.amount, payment.accepted.amount, f"paid {TOOL}: settlement amount")

    # The same payment for the same call, as after a lost answer: the kept
    # answer and the first settlement, not a refusal as already used.
    with step(f"{TOOL} again with the same payment"):
        again = await client.call_tool(TOOL, ARGS, meta=meta)
    if again.is_error:
        raise CheckFailed(f"{TOOL} again with the same payment: tool error {show(text(again))}, "
                          "want the first answer and settlement")
    equal((again.meta or {}).get(RESPONSE), (paid.meta or {}).get(RESPONSE), f"{TOOL} again: the settlement")
    equal(again.structured_content, answer, f"{TOOL} again: the answer")


asyncio.run(main())
