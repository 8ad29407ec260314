// Package trust is the agent-facing trust service: one call that delegates
// a task, validates a claimed result, or arbitrates a dispute, under a
// policy tier, and answers with a status, a confidence, evidence, retry
// instructions and, on request, a receipt.
//
// A [Service] runs on any router.Service: the in-process router.Engine or
// a remote router.Client. [NewHandler] serves any [Caller] over HTTP and
// [Client] calls a remote one.
//
// The task's JSON members (claimed_result, spec, dispute_context) are
// json.RawMessage: write a plain value with [JSON], as in
// trust.Task{ClaimedResult: trust.JSON("Paris")}. A validation's workers
// read the task's input, spec and dispute context as the router.Job
// members TaskInput, TaskSpec and DisputeContext. The package example
// runs a whole call on the host's own workers, with a signed receipt
// verified afterwards.
//
// # Routes
//
// The interface leaves the path of the trust call open: [NewHandler]
// serves it at POST /api/v4/trust, with a trial variant at
// /api/v4/trial/trust and an x402 variant at /api/v4/x402/trust, placed as
// the router's variants are (docs/INTERFACE.md, section 9, has the whole
// wire contract); with [WithReceiptEndpoints] it also serves GET
// /api/v4/receipt/{receipt_id} and POST /api/v4/verify_receipt. It
// authenticates, limits, deduplicates and fails exactly as router.Handler
// does, and names the authenticated caller to the Service with
// [WithCaller], so that the caller owns the call's receipt.
//
// # From tier to router calls
//
// Each policy tier maps to router version 3 calls, as data in the code:
//
//	policy    router tier       replicas   disagreement_policy    calls
//	fast      fast              1          best_effort            1
//	safe      safe              3          best_effort            1
//	oracle    oracle            5          fail_hard              1
//	adaptive  fast→safe→oracle  1→3→5      best_effort            1 to 3
//
// With [WithSingleSession], a one-replica rung calls the version 2
// endpoint on that session instead. Delegation calls /api/v3/delegate;
// validation and arbitration call /api/v3/validate, the claimed result
// as the claim and the task's input, spec and dispute context in the
// claim's context.
//
// Adaptive starts with one replica and escalates through follow-on calls
// to 3 and then 5 replicas unless the step is settled: decisive (below),
// with no dissent among the replicas that answered (those cancelled by
// early quorum do not count), and backed by a mean worker-reported
// confidence of at least the escalation threshold (0.8 by default; [WithEscalationThreshold]).
// The evidence lists every step and the total replicas spent.
//
// # Status
//
// A step is decisive when a strict majority of its replicas (agreement
// above 0.5) back a definite answer:
// for validation and arbitration the verdict VALID or INVALID, for
// delegation a result. The last step decides the status:
//
//	mode         decisive VALID   decisive INVALID   otherwise
//	validation   VALID            INVALID            RETRY (NEEDS_SPEC when a majority says so)
//	arbitration  SELLER_VALID     SELLER_INVALID     INCONCLUSIVE
//	delegation   VALID (a result backed by a majority)  RETRY, with the best-effort result if any
//
// An oracle call whose replicas disagree (fail_hard) is not an error to
// the caller: it answers RETRY, or INCONCLUSIVE for arbitration, with the
// per-replica evidence. retry_instructions is set for RETRY (why, when,
// and the stronger tier to retry with) and NEEDS_SPEC (what is missing),
// and null otherwise. confidence is the router's consensus confidence of
// the last step.
//
// # Receipts
//
// With [WithSigningKey] (or [WithSigningKeyFile], or [WithReceipts] for a
// whole receipt.Issuer), a request whose receipt block asks for one (mode
// inline or detached; receipt.Inline() asks for an inline receipt with
// every optional member) gets a receipt of the decision, following the
// lifecycle the interface sets out: the decision, then the receipt built from what
// really ran (the last step's consensus block and tier, the hashes of the
// input and of the chosen result, and the sessions, task ids and trace id
// of every step, each as the include flags ask), signed when the issuer
// has a signer, stored, and returned whole (inline) or as its receipt_id,
// ttl, visibility and expiry (detached). Without a receipt block, or with
// mode none, nothing is built or stored and the response has no receipt
// member. The caller named by [WithCaller] owns the receipt; shared
// receipts may also be fetched by the counterparties the block names. A
// decision whose receipt cannot be stored is answered 503, never without
// the receipt it asked for. A ttl or visibility beyond what the receipt
// environment grants is narrowed, not refused: the receipt records the
// effective values and the response's receipt_clamped says which were
// narrowed and why ([ReceiptClamp]).
//
// Every receipt a logging store keeps (receipt.MemStore, boltstore,
// pgstore) is also a leaf of its transparency log; [WithReceiptLog]
// serves the log's checkpoint, a receipt's inclusion proof and
// consistency proofs beside the receipt endpoints (see receipt.Log).
//
// trace_id is the W3C trace id of the incoming request when there is one,
// otherwise a new one; the router calls carry it. service_version is
// [Version].
package trust
