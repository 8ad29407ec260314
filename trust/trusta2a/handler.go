package trusta2a

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/internal/telemetry"
	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// DefaultMaxBodyBytes bounds a request's body when Config.MaxBodyBytes is
// 0.
const DefaultMaxBodyBytes = 1 << 20

// Config configures [NewHandler].
type Config struct {
	// Caller answers validate_claim, delegate_task and arbitrate: a
	// trust.Service or a trust.Client. Required.
	Caller trust.Caller
	// Router answers factcheck; nil refuses factcheck messages. Usually
	// the router.Engine or router.Client the trust.Service runs on.
	Router router.Service
	// Authenticator names the caller of each request from its
	// credential, as the router and trust handlers do; a request it
	// refuses is answered 401. Its name is the caller of the trust call
	// (trust.WithCaller), who owns its receipts and alone finds its task.
	// A name spelt as the doors name a caller without a credential
	// ("ip:<address>", "payer:<address>") would share that caller's
	// tasks, receipts and reports: such a request is answered 500, the
	// mistake logged to Logger.
	// Nil serves every request as trust.DefaultCaller, for a host that
	// authenticates in front of the handler.
	Authenticator router.Authenticator
	// MaxTasks bounds the tasks kept for tasks/get and GetTask, all callers
	// together; 0 means [DefaultMaxTasks]. MaxTasksPerCaller bounds those
	// of one caller (the name the Authenticator gives); 0 means
	// [DefaultMaxTasksPerCaller]. MaxTaskBytes bounds the bytes they take
	// (their JSON, and about 200 bytes a task for the rest), all callers
	// together; 0 means [DefaultMaxTaskBytes].
	//
	// A caller at its own bound forgets its own oldest task. When the
	// store is full, the oldest task of the caller holding the most is
	// forgotten: the most tasks when there are too many, the most bytes
	// when they take too much. So one caller's calls never evict the
	// tasks of a caller that holds fewer (or fewer bytes) than it does.
	// An anonymous caller named by an IPv6 address counts, for these
	// bounds, with every address of its /64; each address still finds
	// only its own tasks.
	// The task just saved is never the one forgotten: when it alone makes
	// its caller the one holding the most bytes, the store holds it
	// beyond MaxTaskBytes, and the next save forgets it first.
	//
	// The tasks whose calls run after their message was answered (1.0's
	// returnImmediately, 0.3's blocking false) are counted apart, and
	// never forgotten while they run: a caller has at most
	// MaxTasksPerCaller running, all callers together at most MaxTasks,
	// of at most MaxTaskBytes.
	MaxTasks          int
	MaxTasksPerCaller int
	MaxTaskBytes      int64
	// MaxBodyBytes bounds a request's body; 0 means [DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// BackgroundTimeout bounds a call made after answering its message
	// (a 1.0 SendMessage with returnImmediately, a 0.3 message/send with
	// blocking false); 0 means [DefaultBackgroundTimeout]. A call that
	// runs longer is cancelled, its task failed 504 timeout.
	// Handler.Close cancels them all.
	BackgroundTimeout time.Duration
	// Logger receives the SDK's log, and the internal errors of failed
	// calls, which a caller sees only as "internal error" (500
	// internal); nil is silent.
	Logger *slog.Logger
}

// Handler is the A2A JSON-RPC endpoint of a Config, which NewHandler
// returns. It is safe for concurrent use; call Close when it is no longer
// served, to end the calls it runs after answering their messages.
type Handler struct {
	h     http.Handler
	tasks *taskStore
}

// NewHandler returns the A2A JSON-RPC endpoint of cfg, to serve at the
// agent card's url: A2A 0.3's message/send and tasks/get (and
// tasks/cancel) on the official A2A Go SDK, and A2A 1.0's SendMessage,
// GetTask, CancelTask and ListTasks, each request in the version its
// A2A-Version header names (see the package doc). It fails when
// cfg.Caller is nil or a bound of cfg is negative.
//
// Before either version reads a request, the handler authenticates it
// and names its caller, and continues the caller's trace: a W3C
// traceparent header makes the caller's span the parent of the trust
// call's span and its trace id the answer's trace_id. Its answer is
// JSON, with a request id in the X-Request-Id header (kept when the
// handler is served behind one that set it), which the problem of a
// refused credential repeats as its request_id, as the router and trust
// handlers answer. A request whose body is not JSON as sent, its
// Content-Type another or its content coded (gzip), is a 415 problem
// naming what to send, as on the router and trust handlers, before any
// JSON-RPC is read.
//
// A 1.0 SendMessage with returnImmediately, and a 0.3 message/send with
// blocking false, make their calls after answering, in goroutines
// bounded by cfg.BackgroundTimeout; call [Handler.Close] when the
// handler is no longer served, to end them.
func NewHandler(cfg Config) (*Handler, error) {
	if cfg.Caller == nil {
		return nil, errors.New("trusta2a: Config.Caller is nil")
	}
	switch {
	case cfg.MaxTasks < 0:
		return nil, fmt.Errorf("trusta2a: Config.MaxTasks %d is negative", cfg.MaxTasks)
	case cfg.MaxTasksPerCaller < 0:
		return nil, fmt.Errorf("trusta2a: Config.MaxTasksPerCaller %d is negative", cfg.MaxTasksPerCaller)
	case cfg.MaxTaskBytes < 0:
		return nil, fmt.Errorf("trusta2a: Config.MaxTaskBytes %d is negative", cfg.MaxTaskBytes)
	case cfg.BackgroundTimeout < 0:
		return nil, fmt.Errorf("trusta2a: Config.BackgroundTimeout %v is negative", cfg.BackgroundTimeout)
	}
	cfg.MaxTasks = cmp.Or(cfg.MaxTasks, DefaultMaxTasks)
	cfg.MaxTasksPerCaller = cmp.Or(cfg.MaxTasksPerCaller, DefaultMaxTasksPerCaller)
	cfg.MaxTaskBytes = cmp.Or(cfg.MaxTaskBytes, DefaultMaxTaskBytes)
	cfg.BackgroundTimeout = cmp.Or(cfg.BackgroundTimeout, DefaultBackgroundTimeout)
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	tasks := newTaskStore(cfg.MaxTasks, cfg.MaxTasksPerCaller, cfg.MaxTaskBytes)
	exec := &executor{caller: cfg.Caller, router: cfg.Router, log: log, tasks: tasks}
	rh := a2asrv.NewHandler(exec, a2asrv.WithTaskStore(tasks), a2asrv.WithLogger(log))
	v1 := &v1Server{exec: exec, tasks: tasks, timeout: cfg.BackgroundTimeout}
	return &Handler{h: httpapi.WithRequestID(&handler{cfg: cfg, rpc: a2asrv.NewJSONRPCHandler(boundHistory{rh}), v1: v1}), tasks: tasks}, nil
}

// ServeHTTP answers an A2A JSON-RPC request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.h.ServeHTTP(w, r) }

// Close ends the calls made after answering their messages (1.0
// SendMessages with returnImmediately, 0.3 message/sends with blocking
// false): each is cancelled, its task failed as a cancelled call's (503
// unavailable), and Close returns once they have ended. Later such
// messages are answered with a task failed the same way, their calls not
// made; the rest is served as before. It returns nil.
func (h *Handler) Close() error {
	h.tasks.stop()
	return nil
}

type handler struct {
	cfg Config
	rpc http.Handler // A2A 0.3, on the SDK
	v1  *v1Server    // A2A 1.0
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if h.cfg.Authenticator != nil {
		caller, err := h.cfg.Authenticator(r)
		if err != nil || caller == "" {
			httpapi.WriteAuthError(w, r, err)
			return
		}
		if err := httpapi.CheckCredentialName(caller); err != nil {
			if h.cfg.Logger != nil {
				h.cfg.Logger.ErrorContext(ctx, "trusta2a: the Authenticator named a credential as callers without one are named", "error", err)
			}
			httpapi.WriteProblem(w, r, httpapi.CredentialNameProblem())
			return
		}
		ctx = trust.WithCaller(ctx, caller)
	}
	if _, ok := traceparent.Of(r.Header); ok && !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = telemetry.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		ctx = traceparent.With(ctx, sc.TraceID().String())
	}
	if !httpapi.CheckJSONBody(w, r) {
		return // a JSON-RPC request is JSON, sent as written
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
	if err != nil {
		writeRPC(w, rpcResponse{JSONRPC: "2.0", Error: &rpcError{Code: -32700,
			Message: fmt.Sprintf("Invalid JSON payload: the body is unreadable or larger than %d bytes", h.cfg.MaxBodyBytes)}})
		return
	}
	var req rpcRequest
	isRequest := json.Unmarshal(body, &req) == nil
	if kind := idKind(req.ID); kind != "" {
		// JSON-RPC 2.0: an id is a string, a number or null, and the
		// answer to a request whose id cannot be read has a null id.
		writeRPC(w, rpcResponse{JSONRPC: "2.0", Error: &rpcError{Code: -32600,
			Message: "Request payload validation error: id: must be a string, a number or null, got " + kind}})
		return
	}
	version, named := requestVersion(r)
	switch {
	case version != version03 && version != version10:
		writeRPC(w, rpcResponse{JSONRPC: "2.0", ID: req.ID, Error: versionNotSupported(version)})
	case version == version10 || !named && isV1Method(req.Method):
		// Each method reads its params strictly, naming the fields at
		// fault; what is refused here is the envelope.
		if rpcErr := readAsSent(body); rpcErr != nil && rpcErr.Code != -32602 {
			writeRPC(w, rpcResponse{JSONRPC: "2.0", ID: req.ID, Error: rpcErr})
			return
		}
		if !isRequest {
			writeRPC(w, rpcResponse{JSONRPC: "2.0", Error: &rpcError{Code: -32700, Message: "Invalid JSON payload: the body is not a JSON-RPC request object"}})
			return
		}
		writeRPC(w, h.v1.serve(ctx, &req))
	case req.Method == "message/stream" || req.Method == "tasks/resubscribe":
		// The SDK serves them; the card announces no streaming, and a
		// resubscription would find a running task by id alone.
		writeRPC(w, rpcResponse{JSONRPC: "2.0", ID: req.ID, Error: &rpcError{Code: -32004,
			Message: "Unsupported operation: this agent serves no streaming (its card says capabilities.streaming false); send message/send"}})
	default:
		rpcErr := readAsSent(body)
		if rpcErr == nil && isRequest {
			// The SDK would answer a request it cannot read with a null
			// id; JSON-RPC answers with the id when it can be read.
			if rpcErr = checkEnvelope(&req); rpcErr == nil {
				rpcErr = readParams03(req.Method, req.Params)
			}
		}
		if rpcErr != nil {
			writeRPC(w, rpcResponse{JSONRPC: "2.0", ID: req.ID, Error: rpcErr})
			return
		}
		if id := taskOf03(req.Method, req.Params); id != "" {
			// The SDK knows a cancel in flight, and a task it executes, by
			// task id alone: a tasks/cancel of another caller's task would
			// join that caller's cancel and be answered with its task, and
			// a message/send naming it would learn that it runs.
			if _, err := h.v1.tasks.Get(ctx, id); err != nil {
				writeRPC(w, rpcResponse{JSONRPC: "2.0", ID: req.ID, Error: &rpcError{Code: -32001, Message: "Task not found"}})
				return
			}
		}
		if req.Method == "message/send" {
			ctx = withSentData(ctx, req.Params)
			var p a2a.MessageSendParams
			if json.Unmarshal(req.Params, &p) == nil && p.Config != nil {
				ctx = withOutputModes(ctx, p.Config.AcceptedOutputModes)
			}
			if p.Message != nil && p.Message.TaskID != "" && h.v1.tasks.isRunning(ctx, p.Message.TaskID) {
				// The SDK would answer it failed, while its call runs on.
				writeRPC(w, rpcResponse{JSONRPC: "2.0", ID: req.ID, Error: &rpcError{Code: -32004,
					Message: fmt.Sprintf("Unsupported operation: task %s is working; read it with tasks/get, or send a new message without taskId", p.Message.TaskID)}})
				return
			}
			if nonBlocking(&p) {
				// The SDK answers on a task's first event, which a call
				// writes once, at its end.
				if task, ok, rpcErr := h.v1.sendNonBlocking03(ctx, p.Message); ok {
					resp := rpcResponse{JSONRPC: "2.0", ID: req.ID, Error: rpcErr}
					if rpcErr == nil {
						resp.Result = withHistory(task, p.Config.HistoryLength)
					}
					writeRPC(w, resp)
					return
				}
			}
		}
		// The SDK writes JSON without naming it; a stream sets its own type.
		w.Header().Set("Content-Type", "application/json")
		sameID(w, r.WithContext(withRequest(ctx)), h.rpc, body, &req)
	}
}

// taskOf03 returns the task a version 0.3 tasks/cancel, or a
// message/send continuing a task, names in params; "" for any other.
func taskOf03(method string, params json.RawMessage) a2a.TaskID {
	switch method {
	case "tasks/cancel":
		var p a2a.TaskIDParams
		if json.Unmarshal(params, &p) == nil {
			return p.ID
		}
	case "message/send":
		var p a2a.MessageSendParams
		if json.Unmarshal(params, &p) == nil && p.Message != nil {
			return p.Message.TaskID
		}
	}
	return ""
}

// nonBlocking reports whether p, the params of a 0.3 message/send, ask
// for its call to be made after answering: configuration.blocking
// false, for a message of no task, without a push notification
// configuration (which the SDK refuses).
func nonBlocking(p *a2a.MessageSendParams) bool {
	cfg := p.Config
	return p.Message != nil && p.Message.TaskID == "" && cfg != nil && cfg.Blocking != nil && !*cfg.Blocking && cfg.PushConfig == nil
}

// readAsSent refuses a body that decoding would read otherwise than it
// was sent, as the HTTP doors do: bytes that are not UTF-8 (read as
// U+FFFD, so that a receipt would hash other text) are a parse error; a
// member named twice in one object (the last copy would win), or an
// envelope member given twice under names that differ in case ("method"
// and "Method", which encoding/json reads as one) or of the wrong type,
// is an invalid request naming it, invalid params within params.
func readAsSent(body []byte) *rpcError {
	var p *problem.Details
	if err := jsonbody.Unmarshal(body, new(rpcRequest)); !errors.As(err, &p) {
		return nil
	}
	if len(p.Errors) == 0 {
		return &rpcError{Code: -32700, Message: "Invalid JSON payload: " + p.Detail}
	}
	fe := p.Errors[0]
	if rest, ok := strings.CutPrefix(fe.Field, "params"); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
		return &rpcError{Code: -32602, Message: "Invalid params: " + fe.Field + ": " + fe.Message}
	}
	return &rpcError{Code: -32600, Message: "Request payload validation error: " + fe.Field + ": " + fe.Message}
}

// readParams03 refuses the params of a version 0.3 method that do not
// fit the method's params type, as invalid params naming the member by
// its path under params ("params.message.messageId"): the SDK would
// answer them as a parse error naming Go types, or without a part's
// index. Params the method requires and the request lacks (a message,
// its messageId, a task's id) are refused the same way, and so are the
// members that neither the method's params, nor a message/send's
// configuration or message (readMessage03), have
// ("params.historyLenght"), which the SDK would skip, a negative
// historyLength, as version 1.0 refuses it, and a number no float64
// holds in the params' metadata (params.metadata.x, which the SDK would
// answer as a parse error naming Go types). Any other error is left to
// the SDK.
func readParams03(method string, params json.RawMessage) *rpcError {
	var v any
	switch method {
	case "message/send":
		v = new(a2a.MessageSendParams)
	case "tasks/get":
		v = new(a2a.TaskQueryParams)
	case "tasks/cancel":
		v = new(a2a.TaskIDParams)
	default:
		return nil
	}
	if len(params) == 0 || string(params) == "null" {
		return &rpcError{Code: -32602, Message: "Invalid params: params: is required: an object"}
	}
	var send struct {
		Message       json.RawMessage `json:"message"`
		Configuration json.RawMessage `json:"configuration"`
	}
	if method == "message/send" && json.Unmarshal(params, &send) == nil && len(send.Message) > 0 && string(send.Message) != "null" {
		if fv := readMessage03(send.Message); fv != nil {
			return &rpcError{Code: -32602, Message: "Invalid params: " + fv.Error()}
		}
	}
	var meta struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if json.Unmarshal(params, &meta) == nil {
		if fv := finite("params.metadata", numbersOf(meta.Metadata)); fv != nil {
			return &rpcError{Code: -32602, Message: "Invalid params: " + fv.Error()}
		}
	}
	var p *problem.Details
	err := jsonbody.Unmarshal(params, v)
	if errors.As(err, &p) && len(p.Errors) > 0 {
		fe := p.Errors[0]
		field := "params"
		switch {
		case fe.Field == "(body)":
		case strings.HasPrefix(fe.Field, "["):
			field += fe.Field
		default:
			field += "." + fe.Field
		}
		return &rpcError{Code: -32602, Message: "Invalid params: " + field + ": " + fe.Message}
	}
	if err != nil {
		return nil
	}
	unknown := unknownMembers("params", params, v)
	if len(unknown) == 0 && len(send.Configuration) > 0 {
		unknown = unknownMembers("params.configuration", send.Configuration, new(a2a.MessageSendConfig))
	}
	if len(unknown) > 0 {
		return &rpcError{Code: -32602, Message: "Invalid params: " + unknown[0].Field + ": " + unknown[0].Message}
	}
	field, n, missing := "params.historyLength", (*int)(nil), ""
	switch v := v.(type) {
	case *a2a.MessageSendParams:
		if v.Message == nil {
			missing = "params.message"
		}
		if v.Config != nil {
			field, n = "params.configuration.historyLength", v.Config.HistoryLength
			if fv := outputModesViolation("params.configuration.acceptedOutputModes", v.Config.AcceptedOutputModes); fv != nil {
				return &rpcError{Code: -32005, Message: "Incompatible content types: " + fv.Error()}
			}
		}
	case *a2a.TaskQueryParams:
		n = v.HistoryLength
		if v.ID == "" {
			missing = "params.id"
		}
	case *a2a.TaskIDParams:
		if v.ID == "" {
			missing = "params.id"
		}
	}
	if missing != "" {
		return &rpcError{Code: -32602, Message: "Invalid params: " + missing + ": is required"}
	}
	if n != nil && *n < 0 {
		return &rpcError{Code: -32602, Message: fmt.Sprintf("Invalid params: %s: is %d; must be 0 or more (0 for no history; leave it out for all)", field, *n)}
	}
	return nil
}

// unknownMembers returns the members of raw, the object at path, that v
// has no field for; none when raw is not an object.
func unknownMembers(path string, raw json.RawMessage, v any) []problem.FieldError {
	var members map[string]json.RawMessage
	if json.Unmarshal(raw, &members) != nil {
		return nil
	}
	return jsonbody.UnknownMembers(path, members, v)
}

// idKind returns the kind of a JSON-RPC id that JSON-RPC 2.0 does not
// allow ("an object", "an array", "a boolean"), or "" for a string, a
// number, null or no id.
func idKind(id json.RawMessage) string {
	switch k := jsonbody.Kind(id); k {
	case "object", "array":
		return "an " + k
	case "bool":
		return "a boolean"
	}
	return ""
}

// versionHeader is the header (or query parameter) a request names its
// A2A version in.
const versionHeader = "A2A-Version"

// requestVersion is the A2A version a request names, as Major.Minor (a
// patch number is not considered), and whether it names one: absent
// means 0.3. A request that names several versions, in A2A-Version
// headers or query parameters, gets them joined with commas, which no
// version is: a proxy and the agent could each read another.
func requestVersion(r *http.Request) (version string, named bool) {
	var versions []string
	for _, v := range append(r.Header.Values(versionHeader), r.URL.Query()[versionHeader]...) {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if major, rest, ok := strings.Cut(v, "."); ok {
			minor, _, _ := strings.Cut(rest, ".")
			v = major + "." + minor
		}
		if !slices.Contains(versions, v) {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		return version03, false
	}
	return strings.Join(versions, ","), true
}
