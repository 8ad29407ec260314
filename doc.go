// Package vouch delegates AI work to a network of workers and validates
// claimed results before anyone acts, pays or settles on them.
//
// The module is a set of small packages, one job each. Most hosts import
// trust and router; the others come in when a host needs what they own.
//
//   - trust: the service an agent calls: delegation, validation and
//     arbitration under the fast, safe, oracle and adaptive tiers, answered
//     with a status, a confidence, evidence, retry instructions and, on
//     request, a receipt; in process (trust.New) or over HTTP
//     (trust.NewHandler, trust.Client). Its subpackages serve it to
//     agents: trustmcp (MCP tools), trusta2a (A2A), agentcard (the A2A
//     agent card), and trustpay joins it to x402 payments.
//   - router: the jobs themselves: the wire contract of delegate,
//     validate and factcheck (versions 1 to 3), the in-process Engine that
//     runs them on the host's own worker functions, a remote Client, and a
//     handler that serves them. routertest holds fake workers for tests,
//     chatworker runs jobs on OpenAI-compatible language models, embedkey
//     groups free-text answers by their embeddings.
//   - consensus: pure functions that turn replica votes into one outcome
//     (majority, weighted, median), with agreement, confidence,
//     disagreement policies, the early stop, and the fan-out runner.
//   - reputation: what a host learned of each session's reliability, from
//     the outcomes it reports, and the calibration of confidence on them;
//     boltstore keeps it on disk.
//   - receipt: signed records of decisions (version 4): canonical hashes,
//     Ed25519 signatures, stores with a transparency log, lookup and
//     verification; boltstore keeps them on disk.
//   - x402: pay-per-call HTTP with the public x402 protocol: a paying
//     http.RoundTripper, a middleware that asks for payment, escrowed
//     payments; evm signs and checks payments on EVM networks, escrow
//     recovers held payments after a restart and refunds disputed ones,
//     boltstore keeps the escrow ledger on disk, x402test checks ledgers
//     and stores.
//   - pgstore: the state several servers share, in PostgreSQL (receipts,
//     idempotency, rate limits, payment replay, reputation, escrow).
//   - problem: the one error body of every HTTP door, RFC 9457
//     application/problem+json with a machine code and field errors.
//
// The examples directory holds runnable programs: examples/embed (the
// program the README opens with), examples/server (a demo server with
// every door), and others for paid calls, marketplaces and receipts.
//
// This package holds no code; it documents the module.
package vouch
