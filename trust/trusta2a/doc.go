// Package trusta2a serves a vouch trust service to agents over A2A, the
// Agent2Agent protocol. It runs on the official A2A Go SDK
// (github.com/a2aproject/a2a-go), protocol version 0.3: message/send and
// tasks/get (and tasks/cancel) over JSON-RPC 2.0, at the url of the agent
// card that package agentcard publishes.
//
// A message asks for one call, by one of the card's skills:
// validate_claim, delegate_task, arbitrate (trust calls in modes
// validation, delegation and arbitration) or factcheck. It says so with
// a data part whose members are the skill's arguments, as the MCP tools
// of package trustmcp take them:
//
//	{"claimed_result":"17 * 3 = 51","input":"What is 17 * 3?","policy":"safe","receipt":"inline"}
//
// (the members imply the skill: dispute_context is arbitrate,
// claimed_result validate_claim, claim factcheck, objective or input
// delegate_task; "skill" names it outright; a delegation that answers a
// number adds "answer":"number" and may add "tolerance", as the trust
// envelope's task does), or with a text part in one
// of the sentences the card's examples show, the same JSON object, or:
//
//	Validate the claimed result "17 * 3 = 51" for the task "What is 17 * 3?"
//	Is "17 * 3 = 50" a correct answer to "What is 17 * 3?"
//	Delegate the task "What is 17 * 3?" with policy fast
//	The seller delivered "17 * 3 = 50"; the buyer says "it is wrong". Who is right?
//	Is it true that 17 * 3 = 51?
//	Fact-check "17 * 3 = 50" with replicas 5
//
// Quoted strings are JSON strings (or “curly quotes”); options follow the
// sentence: policy fast|safe|oracle|adaptive and receipt
// none|inline|detached for the trust skills, mode standard|realtime and
// replicas 3|5 for factcheck. The answer is a completed task whose
// artifact, named after the skill, holds the answer as a data part (the
// trust.Response: status, result, confidence, evidence, retry
// instructions, trace_id and, when asked for, the receipt, with the
// inline receipt's text as issued in receipt_json, the bytes that
// verify; or the router.FactcheckResponse) and a one-line summary as a
// text part. A message the agent cannot read is answered with the
// JSON-RPC error "invalid params" (-32602) whose data.error names the
// member or the text at fault and what is allowed ([InputError]); no task
// is made. A call that fails ends its task failed, the status message
// saying why as the HTTP routes would, with a problem's detail, status
// and code (also in the message's metadata, "status" and "code"); an
// error that is not a problem is logged (Config.Logger) and shown only
// as "internal error (500 internal)".
//
// Requests are authenticated by the router's Authenticator; the caller
// it names owns the call's receipts and alone finds its tasks. The
// package is apart from trust so that importers of trust do not link the
// A2A SDK.
package trusta2a
