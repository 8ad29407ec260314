package trusta2a

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/vouchkit/vouch/problem"
)

// The A2A protocol versions served, as the A2A-Version header names them
// (Major.Minor).
const (
	version03 = "0.3"
	version10 = "1.0"
)

// v1Methods lists the JSON-RPC methods of A2A 1.0 served.
const v1Methods = "SendMessage, GetTask, CancelTask, ListTasks"

// isV1Method reports whether method is a method only A2A 1.0 has: one
// of v1Methods, or one the agent answers with the error of a capability
// its card does not declare (see unserved).
func isV1Method(method string) bool {
	switch method {
	case "SendMessage", "GetTask", "CancelTask", "ListTasks":
		return true
	}
	return unserved(method) != nil
}

// unserved is the error of a method of A2A 1.0 that needs a capability
// the agent's card does not declare, as the specification's capability
// validation requires: UnsupportedOperation (−32004) for
// SendStreamingMessage and SubscribeToTask (capabilities.streaming is
// false) and for GetExtendedAgentCard (capabilities.extendedAgentCard is
// false), PushNotificationNotSupported (−32003) for the push notification
// configuration methods (capabilities.pushNotifications is false). It is
// nil for any other method.
func unserved(method string) *rpcError {
	meta := map[string]string{"method": method}
	switch method {
	case "SendStreamingMessage", "SubscribeToTask":
		return a2aError(-32004, "UNSUPPORTED_OPERATION", "Unsupported operation: this agent serves no streaming (its card says capabilities.streaming false); send SendMessage, and read a task with GetTask", meta)
	case "GetExtendedAgentCard":
		return a2aError(-32004, "UNSUPPORTED_OPERATION", "Unsupported operation: this agent has no extended agent card (its card says capabilities.extendedAgentCard false)", meta)
	case "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig":
		return a2aError(-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push notification not supported: this agent answers each message at once (its card says capabilities.pushNotifications false)", meta)
	}
	return nil
}

// rpcRequest is a JSON-RPC 2.0 request.
type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// rpcResponse is a JSON-RPC 2.0 response: a result or an error.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error with the details A2A 1.0 gives it: an
// ErrorInfo for an A2A error, a BadRequest naming the fields at fault
// for invalid params.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    []any  `json:"data,omitempty"`
}

// errorInfo is a google.rpc.ErrorInfo, in ProtoJSON's Any form.
type errorInfo struct {
	Type     string            `json:"@type"`
	Reason   string            `json:"reason"`
	Domain   string            `json:"domain"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// badRequest is a google.rpc.BadRequest, in ProtoJSON's Any form.
type badRequest struct {
	Type            string            `json:"@type"`
	FieldViolations []*fieldViolation `json:"fieldViolations"`
}

// fieldViolation names a member of a request's params by its JSON field
// path, and what is wrong with it.
type fieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

func (v *fieldViolation) Error() string { return v.Field + ": " + v.Description }

// a2aError is the A2A error of code, its ErrorInfo's reason the error's
// name in UPPER_SNAKE_CASE, as the A2A 1.0 JSON-RPC binding writes it.
func a2aError(code int, reason, message string, meta map[string]string) *rpcError {
	return &rpcError{Code: code, Message: message, Data: []any{errorInfo{Type: "type.googleapis.com/google.rpc.ErrorInfo",
		Reason: reason, Domain: "a2a-protocol.org", Metadata: meta}}}
}

func invalidParams(v *fieldViolation) *rpcError {
	return &rpcError{Code: -32602, Message: "Invalid parameters: " + v.Error(),
		Data: []any{badRequest{Type: "type.googleapis.com/google.rpc.BadRequest", FieldViolations: []*fieldViolation{v}}}}
}

func taskNotFound(id string) *rpcError {
	return a2aError(-32001, "TASK_NOT_FOUND", fmt.Sprintf("Task not found: no task %q of this caller (unknown, or forgotten)", id),
		map[string]string{"taskId": id})
}

// contentTypeNotSupported is the error of a part whose mediaType the
// agent does not read: ContentTypeNotSupported (−32005), as the
// specification names it for a media type of the message's parts, with
// a BadRequest naming the member beside the ErrorInfo.
func contentTypeNotSupported(e *mediaTypeError) *rpcError {
	rerr := a2aError(-32005, "CONTENT_TYPE_NOT_SUPPORTED", "Content type not supported: "+e.Error(),
		map[string]string{"mediaType": e.mediaType})
	rerr.Data = append(rerr.Data, badRequest{Type: "type.googleapis.com/google.rpc.BadRequest", FieldViolations: []*fieldViolation{e.violation}})
	return rerr
}

// versionNotSupported is the error of a request whose A2A-Version names
// a version not served.
func versionNotSupported(version string) *rpcError {
	message := fmt.Sprintf("Version not supported: A2A-Version %q; this agent serves %s and %s", version, version03, version10)
	if strings.Contains(version, ",") {
		message = fmt.Sprintf("Version not supported: the request names A2A-Version %s; name one, %s or %s", version, version03, version10)
	}
	return a2aError(-32009, "VERSION_NOT_SUPPORTED", message,
		map[string]string{"version": version, "supportedVersions": version03 + "," + version10})
}

// violationOf names the member a decoding error of the object at path
// names; path "" is a 1.0 request's params, which a violation of their
// own (not an object) names "params".
func violationOf(path string, err error) *fieldViolation {
	var v *fieldViolation
	if errors.As(err, &v) {
		return v
	}
	var p *problem.Details
	if !errors.As(err, &p) {
		return &fieldViolation{Field: path, Description: err.Error()}
	}
	if len(p.Errors) == 0 {
		return &fieldViolation{Field: path, Description: p.Detail}
	}
	field := p.Errors[0].Field
	switch {
	case field == "" || field == "(body)":
		field = cmp.Or(path, "params")
	case path == "":
	case strings.HasPrefix(field, "["):
		field = path + field
	default:
		field = path + "." + field
	}
	return &fieldViolation{Field: field, Description: p.Errors[0].Message}
}

// checkEnvelope refuses a request that is not JSON-RPC 2.0: another
// jsonrpc member, or none, or no method.
func checkEnvelope(req *rpcRequest) *rpcError {
	if req.JSONRPC != "2.0" || req.Method == "" {
		return &rpcError{Code: -32600, Message: `Request payload validation error: a JSON-RPC 2.0 request has "jsonrpc":"2.0" and a method`}
	}
	return nil
}

// v1Server answers the JSON-RPC methods of A2A 1.0 with the executor of
// the 0.3 methods, keeping its tasks in the same store, so that a task is
// read in either version.
type v1Server struct {
	exec    *executor
	tasks   *taskStore
	timeout time.Duration // of a call made after answering
}

// serve answers req, the request of the caller of ctx.
func (s *v1Server) serve(ctx context.Context, req *rpcRequest) rpcResponse {
	resp := rpcResponse{JSONRPC: "2.0", ID: req.ID}
	if resp.Error = checkEnvelope(req); resp.Error != nil {
		return resp
	}
	params := req.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	switch req.Method {
	case "SendMessage":
		resp.Result, resp.Error = s.sendMessage(ctx, params)
	case "GetTask":
		resp.Result, resp.Error = s.getTask(ctx, params)
	case "CancelTask":
		resp.Result, resp.Error = s.cancelTask(ctx, params)
	case "ListTasks":
		resp.Result, resp.Error = s.listTasks(ctx, params)
	default:
		if resp.Error = unserved(req.Method); resp.Error != nil {
			return resp
		}
		resp.Error = &rpcError{Code: -32601, Message: fmt.Sprintf("Method not found: %q is not a method of A2A %s served here (%s)",
			req.Method, version10, v1Methods)}
	}
	return resp
}

// sendMessage answers SendMessage: the message's call, made at once, its
// task completed or failed in the answer.
func (s *v1Server) sendMessage(ctx context.Context, params json.RawMessage) (any, *rpcError) {
	var req v1SendMessageRequest
	if err := decodeStrict("", params, &req); err != nil {
		return nil, invalidParams(violationOf("", err))
	}
	if v := noTenant(req.Tenant); v != nil {
		return nil, invalidParams(v)
	}
	var cfg v1SendMessageConfiguration
	if req.Configuration != nil {
		if err := decodeStrict("configuration", *req.Configuration, &cfg); err != nil {
			return nil, invalidParams(violationOf("configuration", err))
		}
		if v := historyLength("configuration.historyLength", cfg.HistoryLength); v != nil {
			return nil, invalidParams(v)
		}
		if len(cfg.TaskPushNotificationConfig) > 0 && string(cfg.TaskPushNotificationConfig) != "null" {
			return nil, a2aError(-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED", "Push notification not supported: this agent answers each message at once", nil)
		}
		if v := outputModesViolation("configuration.acceptedOutputModes", cfg.AcceptedOutputModes); v != nil {
			return nil, contentTypeNotSupported(&mediaTypeError{mediaType: strings.Join(cfg.AcceptedOutputModes, ","), violation: v})
		}
	}
	msg, err := v1MessageIn(req.Message)
	if me := (*mediaTypeError)(nil); errors.As(err, &me) {
		return nil, contentTypeNotSupported(me)
	}
	if err != nil {
		return nil, invalidParams(violationOf("message", err))
	}
	if msg.TaskID != "" {
		task, err := s.tasks.Get(ctx, msg.TaskID)
		if err != nil {
			return nil, taskNotFound(string(msg.TaskID))
		}
		return nil, a2aError(-32004, "UNSUPPORTED_OPERATION", fmt.Sprintf("Unsupported operation: task %s is %s; send a new message without taskId",
			task.ID, v1State(task.Status.State)), map[string]string{"taskId": string(task.ID)})
	}
	reqCtx := &a2asrv.RequestContext{Message: msg, TaskID: a2a.NewTaskID(), ContextID: msg.ContextID}
	if reqCtx.ContextID == "" {
		reqCtx.ContextID = a2a.NewContextID()
	}
	msg.TaskID, msg.ContextID = reqCtx.TaskID, reqCtx.ContextID
	ctx = withOutputModes(ctx, cfg.AcceptedOutputModes)
	if cfg.ReturnImmediately {
		c, err := s.exec.read(ctx, reqCtx)
		if err != nil {
			return nil, invalidParams(messageViolation(msg, err))
		}
		return s.sendInBackground(ctx, reqCtx, c, cfg.HistoryLength)
	}
	task, err := s.exec.answer(ctx, reqCtx)
	if err != nil {
		return nil, invalidParams(messageViolation(msg, err))
	}
	if err := s.tasks.Save(ctx, task); err != nil {
		s.exec.log.ErrorContext(ctx, "trusta2a: saving a task failed", "error", err)
		return nil, &rpcError{Code: -32603, Message: "Internal error"}
	}
	return map[string]v1Task{"task": v1TaskOf(task, cfg.HistoryLength, true)}, nil
}

// messageViolation names the member of params.message that err, the
// executor's refusal of msg, is about: a data part's member by its path
// (message.parts[0].data.policy), or the text part, or the message.
func messageViolation(msg *a2a.Message, err error) *fieldViolation {
	desc := strings.TrimPrefix(err.Error(), a2a.ErrInvalidParams.Error()+": ")
	var ie *InputError
	if !errors.As(err, &ie) {
		return &fieldViolation{Field: "message", Description: desc}
	}
	switch ie.Argument {
	case "message":
		return &fieldViolation{Field: "message", Description: desc}
	case "parts":
		return &fieldViolation{Field: "message.parts", Description: ie.Message}
	}
	if i := slices.IndexFunc(msg.Parts, func(p a2a.Part) bool { _, ok := p.(a2a.DataPart); return ok }); i >= 0 {
		field := fmt.Sprintf("message.parts[%d].data", i)
		switch {
		case ie.Argument == "data":
		case strings.HasPrefix(ie.Argument, "["):
			field += ie.Argument
		default:
			field += "." + ie.Argument
		}
		return &fieldViolation{Field: field, Description: strings.TrimPrefix(desc, ie.Argument+": ")}
	}
	i := slices.IndexFunc(msg.Parts, func(p a2a.Part) bool { _, ok := p.(a2a.TextPart); return ok })
	if ie.Argument == "text" {
		desc = strings.TrimPrefix(desc, "text: ")
	}
	return &fieldViolation{Field: fmt.Sprintf("message.parts[%d].text", max(i, 0)), Description: desc}
}

// getTask answers GetTask: a task of the caller's, whichever version
// made it.
func (s *v1Server) getTask(ctx context.Context, params json.RawMessage) (any, *rpcError) {
	var req v1GetTaskRequest
	task, rerr := s.find(ctx, params, &req, &req.Tenant, &req.ID, &req.HistoryLength)
	if rerr != nil {
		return nil, rerr
	}
	return v1TaskOf(task, req.HistoryLength, true), nil
}

// cancelTask answers CancelTask: a running task (see sendInBackground)
// has its call cancelled, and is answered canceled once the call ends; a
// task that has finished cannot be cancelled. When the request's context
// ends before the call has stopped, the answer is an internal error
// saying so: the call still stops, and ends its task canceled.
func (s *v1Server) cancelTask(ctx context.Context, params json.RawMessage) (any, *rpcError) {
	var req v1CancelTaskRequest
	task, rerr := s.find(ctx, params, &req, &req.Tenant, &req.ID, nil)
	if rerr != nil {
		return nil, rerr
	}
	if ended, ok, err := s.tasks.cancelRun(ctx, task.ID); ok {
		switch {
		case errors.Is(err, a2a.ErrTaskNotFound): // forgotten once it ended
			return nil, taskNotFound(req.ID)
		case err != nil: // the request ended first; the call still stops
			return nil, &rpcError{Code: -32603, Message: fmt.Sprintf("Internal error: the request ended (%v) before the call of task %s stopped; "+
				"the call is cancelled: read the task with GetTask", err, req.ID)}
		}
		if task = ended; task.Status.State == a2a.TaskStateCanceled {
			return v1TaskOf(task, nil, true), nil
		}
	} else if !task.Status.State.Terminal() { // its call ended since
		if t, err := s.tasks.Get(ctx, task.ID); err == nil {
			task = t
		}
	}
	return nil, a2aError(-32002, "TASK_NOT_CANCELABLE", fmt.Sprintf("Task not cancelable: task %s is %s", task.ID, v1State(task.Status.State)),
		map[string]string{"taskId": req.ID})
}

// find decodes params into req, whose member id names a task, and
// returns that task of the caller of ctx; tenant is req's tenant,
// refused when set; history, when not nil, is req's historyLength,
// refused when negative.
func (s *v1Server) find(ctx context.Context, params json.RawMessage, req any, tenant, id *string, history **int32) (*a2a.Task, *rpcError) {
	if err := decodeStrict("", params, req); err != nil {
		return nil, invalidParams(violationOf("", err))
	}
	if v := noTenant(*tenant); v != nil {
		return nil, invalidParams(v)
	}
	if history != nil {
		if v := historyLength("historyLength", *history); v != nil {
			return nil, invalidParams(v)
		}
	}
	if *id == "" {
		return nil, invalidParams(&fieldViolation{Field: "id", Description: "is required"})
	}
	task, err := s.tasks.Get(ctx, a2a.TaskID(*id))
	if err != nil {
		return nil, taskNotFound(*id)
	}
	return task, nil
}

// noTenant refuses a request's tenant: the agent's interfaces name none,
// so a request naming one is meant for another agent (or another
// tenant's interface), and answering it as if it named none would mix
// the two.
func noTenant(tenant string) *fieldViolation {
	if tenant == "" {
		return nil
	}
	return &fieldViolation{Field: "tenant", Description: "this agent's interfaces name no tenant"}
}

// historyLength refuses a negative historyLength, the member at field:
// the specification bounds the history returned by a count, 0 for none
// and unset for all, and its validation refuses a negative one.
func historyLength(field string, n *int32) *fieldViolation {
	if n == nil || *n >= 0 {
		return nil
	}
	return &fieldViolation{Field: field, Description: fmt.Sprintf("is %d; must be 0 or more (0 for no history; leave it out for all)", *n)}
}

// stateNames are the 1.0 task states, in their enum's order.
func stateNames() []string {
	return []string{"TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED",
		"TASK_STATE_CANCELED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED"}
}

// writeRPC writes resp as the answer to a JSON-RPC request.
func writeRPC(w http.ResponseWriter, resp rpcResponse) {
	body, err := json.Marshal(resp)
	if err != nil { // a result of JSON values: never
		body = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}
