"""The x402 Python SDK (x402) as a client of x402 version 1, as x402-fetch
does with @x402/fetch: the 402 of each of POST /api/v2/x402/validate,
GET /api/v1/x402/ping and POST /api/v4/x402/trust reaches the SDK with its
PAYMENT-REQUIRED header (version 2) removed, as a server of version 1
answers, so that the SDK reads the terms from the body, which it decodes
as version 1 (exact, a network of version 1 such as base-sepolia,
maxAmountRequired); an httpx client on the SDK's payment transport, with
its EVM exact client (which registers the version 1 scheme for the
networks of version 1) signing with a new eth-account key, sends one proof
of version 1 in X-PAYMENT and no PAYMENT-SIGNATURE, gets the route's
answer, and X-PAYMENT-RESPONSE says the payment settled, from that key's
address, on the version 1 network of the terms, for their amount."""

import asyncio
import json

import httpx
from eth_account import Account
from x402 import x402Client
from x402.http.clients import x402_httpx_transport
from x402.http.utils import decode_payment_response_header, decode_payment_signature_header
from x402.http.x402_http_client import x402HTTPClient
from x402.mechanisms.evm.exact.register import register_exact_evm_client
from x402.schemas import PaymentRequiredV1

from vouchcheck import equal, need, ok, show, step

TRUE_CLAIM = "17 * 3 = 51"
ROUTES = [
    ("POST", "/api/v2/x402/validate", {"session_id": 1, "claim": {"type": "tool_output", "output": TRUE_CLAIM}},
     lambda b: ("verdict", b.get("verdict"), "VALID")),
    ("GET", "/api/v1/x402/ping", None, lambda b: ("message", b.get("message"), "pong")),
    # The safe tier (3 runs, majority): one of the demo workers answers
    # wrong one call in three, which a single run would report.
    ("POST", "/api/v4/x402/trust",
     {"mode": "validation", "policy": "safe", "task": {"type": "tool_output", "claimed_result": TRUE_CLAIM}},
     lambda b: ("status", b.get("status"), "VALID")),
]


class VersionOne(httpx.AsyncHTTPTransport):
    """The transport under the SDK's: it removes PAYMENT-REQUIRED from every
    402, as a server of version 1 answers, and keeps the payment headers of
    every request."""

    def __init__(self) -> None:
        super().__init__()
        self.sent = []  # (X-PAYMENT, PAYMENT-SIGNATURE) of each request

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append((request.headers.get("x-payment"), request.headers.get("payment-signature")))
        res = await super().handle_async_request(request)
        if res.status_code != 402:
            return res
        body = await res.aread()
        headers = httpx.Headers(res.headers)
        ok("payment-required" in headers, f"{request.method} {request.url.path}: a 402 with no PAYMENT-REQUIRED header to remove")
        del headers["payment-required"]
        return httpx.Response(402, headers=headers, content=body, request=request)


async def main() -> None:
    base = need("VOUCH_BASE_URL").rstrip("/")
    account = Account.create()
    payer = register_exact_evm_client(x402Client(), account)
    recording = VersionOne()
    async with (
        httpx.AsyncClient(transport=recording, timeout=60) as plain,
        httpx.AsyncClient(transport=x402_httpx_transport(payer, recording), timeout=60) as http,
    ):
        for method, path, body, answer in ROUTES:
            what = f"version 1 {method} {path}"

            # Unpaid: the body the SDK reads is the terms of version 1.
            with step(f"{what} unpaid"):
                unpaid = await plain.request(method, base + path, json=body)
            equal(unpaid.status_code, 402, f"{what} unpaid: status")
            with step(f"{what} unpaid: the SDK reading the terms from the body {show(unpaid.text)}"):
                terms = x402HTTPClient(payer).get_payment_required_response(lambda _: None, unpaid.json())
            ok(isinstance(terms, PaymentRequiredV1), f"{what} unpaid: terms {show(terms.model_dump())}, want version 1")
            offers = [o for o in terms.accepts if o.scheme == "exact" and ":" not in o.network]
            ok(offers, f"{what} unpaid: no exact offer on a version 1 network in {show([o.model_dump() for o in terms.accepts])}")

            recording.sent.clear()
            with step(f"{what} paid"):
                res = await http.request(method, base + path, json=body)
            equal(res.status_code, 200, f"{what} paid: status (body {show(res.text)})")
            equal([(x is not None, s is not None) for x, s in recording.sent], [(False, False), (True, False)],
                  f"{what} paid: requests sent (with X-PAYMENT, with PAYMENT-SIGNATURE)")
            proof = decode_payment_signature_header(recording.sent[1][0])
            equal(proof.x402_version, 1, f"{what} paid: X-PAYMENT x402Version")
            offer = next((o for o in offers if o.network == proof.network), None)
            ok(offer, f"{what} paid: X-PAYMENT network {proof.network!r}, want one of the terms' {show([o.network for o in offers])}")

            field, got, want = answer(json.loads(res.text))
            equal(got, want, f"{what} paid: {field}")
            header = res.headers.get("x-payment-response")
            ok(header, f"{what} paid: no X-PAYMENT-RESPONSE header in {show(dict(res.headers))}")
            settled = decode_payment_response_header(header)
            ok(settled.success, f"{what} paid: settlement {show(settled.model_dump())}, want success")
            equal((settled.payer or "").lower(), account.address.lower(), f"{what} paid: settlement payer")
            equal(settled.network, offer.network, f"{what} paid: settlement network")
            equal(settled.amount, offer.max_amount_required, f"{what} paid: settlement amount")


asyncio.run(main())
