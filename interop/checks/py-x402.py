"""The x402 Python SDK (x402) pays POST /api/v2/x402/validate: unpaid, the
route answers 402 with terms in PAYMENT-REQUIRED that the SDK decodes (x402
version 2, the exact scheme, USDC on an EVM network); an httpx client with
the SDK's payment transport and its EVM exact client, signing with a new
eth-account key, sends one PAYMENT-SIGNATURE of version 2 and gets the
verdict VALID, and PAYMENT-RESPONSE says the payment settled, from that
key's address, on the network and for the amount of the offer the payment
accepted. The server's offline facilitator checks the signature and no
balance, so a new key pays."""

import asyncio
import json

import httpx
from eth_account import Account
from x402 import x402Client
from x402.http.clients import x402_httpx_transport
from x402.http.utils import (
    decode_payment_required_header,
    decode_payment_response_header,
    decode_payment_signature_header,
)
from x402.mechanisms.evm.exact.register import register_exact_evm_client

from vouchcheck import equal, need, ok, show, step

PATH = "/api/v2/x402/validate"
BODY = {"session_id": 1, "claim": {"type": "tool_output", "output": "17 * 3 = 51"}}


class Recording(httpx.AsyncHTTPTransport):
    """The transport under the SDK's: it keeps the PAYMENT-SIGNATURE of every request."""

    def __init__(self) -> None:
        super().__init__()
        self.signatures = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if "payment-signature" in request.headers:
            self.signatures.append(request.headers["payment-signature"])
        return await super().handle_async_request(request)


async def main() -> None:
    url = need("VOUCH_BASE_URL").rstrip("/") + PATH

    with step(f"POST {PATH} unpaid"):
        async with httpx.AsyncClient(timeout=60) as plain:
            unpaid = await plain.post(url, json=BODY)
    equal(unpaid.status_code, 402, f"POST {PATH} unpaid: status")
    header = unpaid.headers.get("payment-required")
    ok(header, f"POST {PATH} unpaid: no PAYMENT-REQUIRED header")
    terms = decode_payment_required_header(header)
    equal(terms.x402_version, 2, f"POST {PATH} unpaid: terms x402Version")
    # The offer the SDK pays is the one it picks, which need not be the
    # first: the settlement is checked against the payment's accepted.
    offers = [o for o in terms.accepts if o.scheme == "exact" and o.network.startswith("eip155:")]
    ok(offers, f"POST {PATH} unpaid: no exact offer on an EVM network in {show([o.model_dump() for o in terms.accepts])}")
    for offer in offers:
        ok(str(offer.amount).isdigit() and int(offer.amount) > 0, f"POST {PATH} unpaid: terms amount {offer.amount!r}")

    account = Account.create()
    payer = register_exact_evm_client(x402Client(), account)
    recording = Recording()
    with step(f"POST {PATH} paid"):
        async with httpx.AsyncClient(transport=x402_httpx_transport(payer, recording), timeout=60) as http:
            res = await http.post(url, json=BODY)
    equal(res.status_code, 200, f"POST {PATH} paid: status (body {show(res.text)})")
    equal(len(recording.signatures), 1, f"POST {PATH} paid: PAYMENT-SIGNATURE headers sent")
    payment = decode_payment_signature_header(recording.signatures[0])
    equal(payment.x402_version, 2, f"POST {PATH} paid: PAYMENT-SIGNATURE x402Version")
    ok(payment.accepted in offers,
       f"POST {PATH} paid: PAYMENT-SIGNATURE accepted {show(payment.accepted.model_dump())}, want one of the terms' exact offers")

    equal(json.loads(res.text).get("verdict"), "VALID", f"POST {PATH} paid: verdict")
    header = res.headers.get("payment-response")
    ok(header, f"POST {PATH} paid: no PAYMENT-RESPONSE header")
    settled = decode_payment_response_header(header)
    ok(settled.success, f"POST {PATH} paid: settlement {show(settled.model_dump())}, want success")
    equal((settled.payer or "").lower(), account.address.lower(), f"POST {PATH} paid: settlement payer")
    equal(settled.network, payment.accepted.network, f"POST {PATH} paid: settlement network")
    equal(settled.amount, payment.accepted.amount, f"POST {PATH} paid: settlement amount")


asyncio.run(main())
