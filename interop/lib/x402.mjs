// An x402 payer on the official clients: @x402/core's x402Client with
// @x402/evm's exact scheme, signing with a viem account. examples/server
// settles through an offline facilitator that checks the signature and
// no balance, so a new key pays.
import { x402Client } from "@x402/core/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

/** payer returns an x402Client that pays with a new EVM key, and its account. */
export function payer() {
  const account = privateKeyToAccount(generatePrivateKey());
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: account });
  return { client, account };
}
