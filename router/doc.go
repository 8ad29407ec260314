// Package router runs delegation, validation and factcheck jobs on workers,
// in process or over HTTP. It holds the wire contract of versions 1, 2 and 3
// (typed requests and responses and their validation), the [Service]
// interface with one method per operation, the in-process [Engine] that runs
// the flows on the host's own [Worker] functions, the remote [Client], and
// [NewHandler], which serves any Service over HTTP.
//
// # Operations and routes
//
// Eight operations, each a Service method: delegate and validate in
// versions 1 and 2, factcheck in version 1 (the public router's), and
// delegate, validate and factcheck in version 3 with a consensus block.
// Versions 1 and 2 come in three variants (normal, trial and x402),
// version 3 in the normal variant only. Factcheck v1 is also served under
// its alias fact-check (/api/v1/fact-check, /api/v1/trial/fact-check,
// /api/v1/x402/fact-check), which answers exactly as the canonical path.
// Beside them, the [Handler] answers four GET routes itself: /api/v1/ping
// ({"message":"pong"}, no credential), /api/v1/x402/ping (the same, paid:
// the cheapest paid route, with which a client tests its payment set-up),
// /api/v1/about ([About], no credential) and /api/v1/status ([Status],
// with credentials). [Routes] lists all twenty-five routes with their
// variants, and [RoutePath] gives each canonical path; both come from one
// table, in which every path and alias is written once.
//
// Credentials and payments, after the public router: normal routes take
// "Authorization: Bearer <key>"; trial routes take none and are rate
// limited; x402 routes take a payment proof in X-PAYMENT (x402 version 1)
// or PAYMENT-SIGNATURE (version 2), which x402.Middleware, plugged in with
// [WithX402], reads on every route it prices. The host prices the routes
// in x402.MiddlewareConfig.Routes by "METHOD PATH" pattern, including
// "GET /api/v1/x402/ping", and may pass the same map to
// [WithX402Prices] so that GET /api/v1/about lists the prices.
//
// The whole wire contract (every route, member and status) is written
// out in docs/INTERFACE.md in the repository.
//
// # Decisions where the interface is silent
//
// The interface vouch follows leaves some shapes open. vouch decides them
// as follows, so that every response reads like the rest of the contract:
//
//   - Delegate v1 response: session_id, task_id and task_result_output
//     (the name validate v1 takes the output under).
//   - Validate v1 response: session_id, task_id, verdict, confidence and
//     reasons: the verdict contract of version 2 without evidence.
//   - Delegate v2 response: session_id, task_id, result (any JSON) and
//     evidence with steps, tools and configuration.
//   - Per-replica evidence of version 3 sits in evidence.runs, one [Run]
//     per replica in replica order, for every v3 operation.
//   - Factcheck request: the statement to check (claim), an optional
//     context, a mode (standard or realtime, after the public router's
//     factcheck), a policy and the consensus block. Its verdicts are TRUE
//     and FALSE.
//   - Factcheck v1 request ([FactcheckV1Request]): the public router
//     documents the two modes, redundant checks across at least three
//     workers aggregated by the protocol, and a contract "shaped around
//     mode + policy + consensus + evidence", but no request key. vouch
//     takes the version 3 factcheck's fields without the consensus block:
//     claim, mode, context, request_id, an optional first session_id, a
//     policy whose redundancy is 3 (the default) or 5 (1 is rejected),
//     and session_pool at the top. The replicas are aggregated by
//     majority under best_effort; the answer is the version 3
//     [FactcheckResponse]: a top-level verdict and confidence, reasons,
//     one run per replica in evidence.runs, and the consensus block.
//   - Meta routes: GET /api/v1/ping answers {"message":"pong"}, as a
//     probe of the public router shows; the bodies of about and status
//     are not public, and are [About] and [Status]. Status counts the
//     requests admitted to each route since the Handler was built.
//   - Version 3 requests take session_id as optional: replicas run on
//     sessions drawn from consensus.session_pool, or from every session
//     that serves the tier when the pool is empty.
//   - policy.redundancy is 1, 3 or 5 when present. Validate version 2
//     runs that many replicas (the interface's validate v2 policy);
//     delegate version 2 takes
//     only 1 and points to version 3. In version 3, consensus.replicas
//     governs: a differing policy.redundancy is ignored and
//     consensus.notes says so.
//   - consensus.aggregation defaults to majority; weighted weighs votes
//     by learned reliability, and median and median_of_means aggregate the
//     numbers a delegation answers, within consensus.tolerance (an
//     addition; see [Engine.DelegateV3]); model_ensemble is rejected as
//     "not yet available". consensus.disagreement_policy defaults to
//     best_effort.
//   - The v3 consensus block adds low_confidence, set when best_effort
//     picked a winner despite disagreement. Clients that do not know it
//     may ignore it, as they ignore every unknown member.
//   - policy.timeout_ms is at most 3,600,000 (one hour) and
//     execution.max_steps at most 10,000; zero or absent means the
//     server's default.
//   - Session ids are JSON integers, and decoding also accepts strings of
//     digits, as the public router's documentation writes them, wherever
//     an id appears (session_id, session_pool, consensus.session_pool,
//     the jobs of [HTTPWorker]); anything else is a 400 naming the field.
//     Encoding writes integers; a [Client] built with
//     [WithSessionIDsAsStrings] sends strings.
//   - A validate request's context may carry the task its claim answers
//     under task_input, task_spec and dispute_context (the trust service
//     puts them there); the [Engine] hands them to workers as the typed
//     [Job] members TaskInput, TaskSpec and DisputeContext. A task_input
//     that is no input (a number, a bare array) is a 400 naming
//     context.task_input.
//   - A version 3 body with session_pool at the top level, beside
//     consensus instead of inside it, is a 400 whose field error points
//     to consensus.session_pool: ignored, it would run the call outside
//     the pool the caller meant.
//   - delegate v2 input is an object, a string, or the array form
//     {"kind":"array","items":[...]}; a bare JSON array is rejected with a
//     message that names the array form.
//
// # Errors
//
// Every error is an [Error]: on the wire an RFC 9457
// application/problem+json body with the HTTP status, a machine code and,
// for invalid input, the failing fields by JSON path
// ("consensus.replicas"), never by Go field name. A member the route does
// not define is refused the same way, rule "unknown", naming it by its
// JSON path ("consensus.disagreemnt_policy"), rather than run under the
// default a misspelling would leave in place; free-form objects
// (context, metadata, input) take any members.
//
// A request body is refused with 400 when it is not JSON, holds bytes that
// are not UTF-8, nests deeper than 128 levels, or repeats a member name
// (which readers would resolve differently); with 413 when it is larger
// than the Handler's limit (1 MiB by default).
//
// # Telemetry
//
// The Engine and the Handler report OpenTelemetry spans and metrics
// through the API only ([WithEngineTelemetry], [WithHandlerTelemetry]);
// the host installs the SDK and exporters. docs/OBSERVABILITY.md lists
// them.
package router
