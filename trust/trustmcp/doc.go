// Package trustmcp serves the trust service to agents as Model Context
// Protocol tools, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk). It lives in its own package so
// that importers of trust do not link the SDK.
//
// [NewServer] turns any trust.Caller (the in-process trust.Service or a
// remote trust.Client), and optionally a receipt source and a
// router.Service, into an *mcp.Server with these tools:
//
//	tool            arguments                                         answers
//	validate_claim  input, claimed_result, spec, policy, receipt      the trust response (trust.Response)
//	delegate_task   objective and/or input, policy, receipt,          the trust response of a delegation
//	                agreement (exact or judged)
//	                answer, tolerance
//	arbitrate       input, claimed_result, spec, dispute_context,     SELLER_VALID, SELLER_INVALID or
//	                policy, receipt                                   INCONCLUSIVE, with evidence
//	factcheck       claim, mode, replicas                             router.FactcheckResponse
//	get_receipt     receipt_id                                        {"receipt": the receipt object}
//	verify_receipt  receipt                                           receipt.VerifyResponse
//	report_outcome  trace_id or receipt_id, right or verdict          the report accepted (OutcomeResult)
//
// The first three need Config.Caller; factcheck is listed only with
// Config.Router (a fact check is a router operation, not a trust mode);
// get_receipt and verify_receipt only with Config.Receipts;
// report_outcome only when Config.Caller is a trust.FeedbackReporter. Input and
// output schemas are inferred from the Go types of the arguments and
// answers, and every schema in them is an object: where any JSON value is
// allowed, {"description":"any JSON value"}, never the boolean schema
// true, which MCP clients (the official TypeScript SDK, the Inspector)
// refuse; an object that admits no other members lists them in
// propertyNames rather than with additionalProperties false. Every answer
// carries its structured content and a one-line text summary a model can
// read.
//
// # Arguments
//
// policy is fast, safe, oracle or adaptive, and safe when absent; receipt
// is none, inline or detached, and none when absent. A receipt asked for
// here includes every optional member (the consensus and policy snapshots,
// the input and output hashes, the router trace references) and is private
// to the caller. input is a string or a JSON object (or the array form
// {"kind":"array","items":[...]}); claimed_result, spec and
// dispute_context are any JSON. answer "number" declares that a delegation
// answers a number, counted by the median of its runs within tolerance
// ({"absolute": a, "relative": r}, no other member), as task.answer and
// task.tolerance of the trust envelope are. A bad argument (an unknown policy, a
// missing claimed result, an input that is a number) is a tool error, a
// result with isError set whose text names the argument and the allowed
// values, never a protocol error and never a silent default. An argument
// written as null is left out, as the HTTP doors read a null member. So is an
// error of the trust service or the router: its RFC 9457 detail is the
// text. Any other failure (a receipt store's, a remote service's, a
// verifier's) may carry what a caller must not see, such as a database's
// host and user: it goes to Config.Logger, and the caller reads only
// "<tool>: <what> is unavailable; try again later".
//
// # Who is calling
//
// Receipts belong to the integration that made the call, and get_receipt
// answers only the receipts that integration may see (its own, and shared
// receipts that name it). The tools name the caller to the trust service
// with trust.WithCaller: the UserID of the request's auth.TokenInfo, which
// the SDK's auth.RequireBearerToken middleware sets from the verified
// bearer token on Streamable HTTP; without one (stdio, in-memory
// transports) the caller is trust.CallerFrom of the handler's context,
// trust.DefaultCaller unless the host set one. A host that serves the tools
// over HTTP must therefore put them behind authentication, or every caller
// is the same default one. A UserID spelt as the HTTP doors name a caller
// without a credential ("ip:<address>", "payer:<address>") would share
// that caller's calls and receipts: every tool answers it with a tool
// error, for the host to name the user otherwise. With a remote
// trust.Client, the client's own API key names the caller instead, whatever
// user the token names: every user of the server is then the one caller of
// that key on the remote service, and get_receipt and report_outcome
// answer any of them for the calls of all (one user fetches another's
// private receipt by its id, or reports its call's outcome). To keep users
// apart over a remote service, serve each integration its own server on a
// client with its own key, or run the trust.Service in process. The W3C traceparent header of an HTTP
// request, when there is one, sets the trace id of the call, as on the
// trust service's HTTP route; with [Telemetry] added, the call runs under
// a span of its own, in the caller's trace.
//
// # Paying per call
//
// [Paywall] returns SDK middleware that makes chosen tools pay per call
// as the x402 protocol's MCP transport defines it: a call without
// _meta["x402/payment"] is answered with a tool error carrying the
// payment terms in content[0].text, wrapped as
// {"x402/error":{"code":402,"message":...,"data":<PaymentRequired>}}; a
// call with a valid payment runs, is settled once, and carries the
// settlement in the result's _meta["x402/payment-response"]. The payment
// names the call it paid for: a retry by the same caller with the same
// payment, tool and arguments gets the kept result and the first
// settlement (see [AnswerStore]), any other use of it (another caller's
// included) is refused as already used. The result of a tool that
// settles after it runs is kept before its payment is settled, and not
// settled unless kept; the retry of a call whose settlement failed or
// went unanswered settles it again and gets the kept result, without
// running or checking the tool again, and never pays twice (see
// [Paywall]). A tool priced with an "upto" offer reports what it used with
// x402.ReportUsage, as an HTTP handler does, and only that is settled (a
// tool that reports nothing settles the authorized maximum).
//
// A tool priced with an "auth-capture" offer (PaywallConfig.Escrow) holds
// the payment in escrow, with the steps x402.Middleware runs for a route
// (x402.Escrow): the hold is placed and recorded before the tool runs, a
// delivered result (one its gate passes and, when the tool reports a
// trust status with x402.ReportVerdict, a definitive one, VALID or
// INVALID, which is what the paid trust tools sell) is captured, and a
// tool error, a refusal or another status voids the hold; the outcome
// comes back in
// _meta["x402/payment-response"] with the escrow report
// (x402.EscrowFromSettlement), and is kept with the result for a retry.
//
// The terms are in content[0].text only, not in structuredContent. The
// transport requires the text and makes structuredContent optional, and
// tells clients to look for the terms in both; MCP clients, the official
// TypeScript SDK among them, check a result's structuredContent against
// the tool's output schema even when isError is set, and would refuse the
// terms. The other way, an output schema that also admits the terms,
// would make every answer's schema a union of the answer and the terms,
// and hide the answer's shape from every client and model that reads the
// tool list. [PaymentTerms] reads the terms of a result wherever the
// transport lets a server put them.
package trustmcp
