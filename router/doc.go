// Package router is the wire contract of the delegation and validation
// router, and the ways to run it: typed requests and responses of versions
// 1, 2 and 3, their validation, the [Service] interface with one method per
// operation, the in-process [Engine] that runs the flows on the host's own
// [Worker] functions, the remote [Client], and [NewHandler], which serves
// any Service over HTTP.
//
// # Operations and routes
//
// Seven operations, each a Service method: delegate and validate in
// versions 1 and 2, and delegate, validate and factcheck in version 3 with
// a consensus block. Versions 1 and 2 come in three variants (normal, trial
// and x402), version 3 in the normal variant only; [Routes] lists the
// fifteen POST routes and [RoutePath] builds each path from one table.
//
// # Decisions where the spec is silent
//
// The spec leaves some shapes unshown. vouch decides them as follows, so
// that every response reads like the rest of the contract:
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
//   - Version 3 requests take session_id as optional: replicas run on
//     sessions drawn from consensus.session_pool, or from every session
//     that serves the tier when the pool is empty.
//   - policy.redundancy is 1, 3 or 5 when present; version 2 takes only 1
//     and points to version 3; in version 3 it must equal
//     consensus.replicas.
//   - consensus.aggregation defaults to majority; the later values the
//     spec names (weighted, median, median_of_means, model_ensemble) are
//     rejected as "not yet available". consensus.disagreement_policy
//     defaults to best_effort.
//   - The v3 consensus block adds low_confidence, set when best_effort
//     picked a winner despite disagreement. Clients that do not know it
//     may ignore it (section 9, rule 3).
//   - policy.timeout_ms is at most 3,600,000 (one hour) and
//     execution.max_steps at most 10,000; zero or absent means the
//     server's default.
//   - Session ids are JSON integers, and decoding also accepts strings of
//     digits, as the public router's documentation writes them.
//   - delegate v2 input is an object, a string, or the array form
//     {"kind":"array","items":[...]}; a bare JSON array is rejected with a
//     message that names the array form.
//
// # Errors
//
// Every error is an [Error]: on the wire an RFC 9457
// application/problem+json body with the HTTP status, a machine code and,
// for invalid input, the failing fields by JSON path
// ("consensus.replicas"), never by Go field name. Unknown JSON members are
// ignored, as rule 3 of section 9 asks of clients.
package router
