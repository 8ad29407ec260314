// Package trusta2a serves a vouch trust service to agents over A2A, the
// Agent2Agent protocol.
//
// It speaks versions 0.3 and 1.0, over JSON-RPC 2.0 at the url of the
// agent card that package agentcard publishes: version 0.3's
// message/send and tasks/get (and tasks/cancel) on the official A2A Go
// SDK (github.com/a2aproject/a2a-go), and version 1.0's SendMessage,
// GetTask, CancelTask and ListTasks on this package's own wire types,
// written from the specification (specification/a2a.proto of A2A
// v1.0). A request is served in the version its A2A-Version header
// names (Major.Minor; as a header or a query parameter): absent means
// 0.3, except for a method only 1.0 has, which is served in 1.0; a
// version other than 0.3 and 1.0 is answered VersionNotSupported
// (-32009), and a method of the other version "method not found"
// (-32601). Both versions keep their tasks in one store: a task made in
// one is read in the other.
//
// In 1.0, parts are text or data members (a data part with mediaType
// application/json), a negative historyLength is refused, and so is a
// tenant (the card's interfaces name none); task states and roles are
// the TASK_STATE_* and ROLE_* enums, written by name and read, as
// ProtoJSON reads them, by name or by number ("role":1; a number the
// enum does not define is invalid params), and errors carry the
// specification's details: a
// google.rpc.ErrorInfo (domain a2a-protocol.org) for the A2A errors
// (TaskNotFound −32001, TaskNotCancelable −32002 for a task that has
// finished, PushNotificationNotSupported −32003, UnsupportedOperation
// −32004 for a message to an existing task, ContentTypeNotSupported
// −32005 for a part whose mediaType the agent does not read: a data
// part not JSON, such as text/html, or a text or file part neither text
// nor JSON, such as image/png), and a google.rpc.BadRequest
// whose field violation names the member at fault by its JSON field path
// under params for invalid params (−32602): message.parts[0].data.policy
// for a data part's argument, message.parts[0].text for a text the agent
// cannot read, message.contxtId for a member the specification does not
// define. Version 0.3's params are read as strictly, before the SDK
// decodes them, and refused as invalid params naming the member under
// params: params.message.contxtId, params.message.role for a role other
// than "user", params.message.parts[1].kind for a part of no kind the
// specification defines, params.message.parts[0].data.tolerance.absolute
// for a number no float64 holds.
//
// A 1.0 SendMessage answers once its call is made, or, with the
// configuration's returnImmediately, at once with its task
// TASK_STATE_WORKING: the call is made after answering, whether the
// client stays or not, and ends the task as a blocking SendMessage would
// (except that a call the trust service refuses as the caller's mistake
// ends it failed, where a blocking one is invalid params); GetTask reads
// it meanwhile, and CancelTask (or 0.3's tasks/cancel) cancels the call
// and ends it TASK_STATE_CANCELED. Version 0.3's message/send with the
// configuration's blocking false is served the same way: answered at
// once with its task ("kind":"task") working, its call made after
// answering; tasks/get reads it until it is completed, failed or
// canceled, and tasks/cancel cancels it. A message the agent cannot
// read, or one naming a task, is answered as a blocking one. Such a call
// is bounded by Config.BackgroundTimeout and by [Handler.Close], which a
// host calls once it stops serving the handler; a caller has at most
// Config.MaxTasksPerCaller calls running, of either version (and all
// callers at most Config.MaxTasks): beyond, the task is answered failed,
// 429 rate_limited, its call not made.
//
// In either version, the configuration's
// acceptedOutputModes pick the parts of the answer's artifact (the data
// part is application/json, the summary text/plain); a list that admits
// neither is ContentTypeNotSupported (−32005), and no call is made.
// Streaming, push notifications and an extended agent card are
// not served, and their methods are answered as the specification's
// capability validation requires of a capability the card does not
// declare:
// SendStreamingMessage, SubscribeToTask and GetExtendedAgentCard
// UnsupportedOperation (−32004), the push notification configuration
// methods PushNotificationNotSupported (−32003).
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
// envelope's task does, and one whose answers are free text may ask
// "agreement":"judged"), or with a text part in one
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
