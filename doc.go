// Package vouch delegates AI work to a network of workers and validates
// claimed results before anyone acts, pays or settles on them.
//
// The library is a set of small packages, one job each:
//
//   - router: the wire contract of delegate, validate and factcheck
//     (versions 1 to 3), the in-process Engine that runs them on the host's
//     own workers, a remote Client, and an http.Handler that serves them.
//   - consensus: majority aggregation of replica votes, disagreement
//     policies, agreement and confidence, and the fan-out runner that stops
//     as soon as the outcome is decided.
//   - trust: the agent-facing envelope (delegation, validation and
//     arbitration under the fast, safe, oracle and adaptive tiers), with
//     status, confidence, evidence and retry instructions.
//   - receipt: version 4 receipts: canonical hashes, Ed25519 signatures, a
//     store, and the endpoints that fetch and verify them.
//   - x402: pay-per-call as the public x402 protocol defines it, for
//     clients (a paying http.RoundTripper) and servers (a middleware).
//
// This package holds no code; it documents the module.
package vouch
