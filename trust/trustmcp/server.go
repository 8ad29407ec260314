package trustmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/internal/summary"
	"github.com/vouchkit/vouch/x402"
)

// The names of the tools.
const (
	ToolValidateClaim = "validate_claim"
	ToolDelegateTask  = "delegate_task"
	ToolArbitrate     = "arbitrate"
	ToolFactcheck     = "factcheck"
	ToolGetReceipt    = "get_receipt"
	ToolVerifyReceipt = "verify_receipt"
)

// Name is the implementation name the server reports when Config.Name is
// empty.
const Name = "vouch"

// Receipts fetches and verifies receipts for get_receipt and
// verify_receipt. trust.Client implements it against a remote trust
// service; [StoreReceipts] implements it on a receipt.Store in process.
type Receipts interface {
	// FetchReceipt returns the receipt id exactly as issued, if the caller
	// may see it; a receipt it may not see is an error wrapping
	// receipt.ErrNotFound, or a *trust.Error with status 404.
	FetchReceipt(ctx context.Context, id string) (json.RawMessage, error)
	// VerifyReceipt checks a receipt and reports every check.
	VerifyReceipt(ctx context.Context, req *receipt.VerifyRequest) (*receipt.VerifyResponse, error)
}

// Config configures [NewServer].
type Config struct {
	// Caller answers validate_claim, delegate_task and arbitrate: a
	// trust.Service or a trust.Client. Required. A trust.Client names
	// every user of the server as its own API key (see the package doc,
	// Who is calling).
	Caller trust.Caller
	// Router answers factcheck; nil leaves factcheck out of the tool list.
	// Usually the router.Engine or router.Client the trust.Service runs on.
	Router router.Service
	// Receipts answers get_receipt and verify_receipt; nil leaves them out
	// of the tool list.
	Receipts Receipts
	// Name and Version are the implementation the server reports; empty
	// means [Name] and trust.Version.
	Name, Version string
	// Logger receives the SDK server's log, and the internal errors of
	// the tools, which a caller gets only as "unavailable"; nil is
	// silent.
	Logger *slog.Logger
}

// The costs of the tiers, stated in each trust tool's description so that
// an agent can choose.
const tierGuide = " Cost is counted in runs (independent workers judging or doing the task): " +
	"policy fast = 1 run, for cheap, reversible decisions; " +
	"safe = 3 runs, majority wins (the default), for most decisions; " +
	"oracle = 5 runs, any dissent is not accepted, for payments and irreversible actions; " +
	"adaptive = runs launched a few at a time (two to start) and pooled into one tally, stopping as soon as the outcome is settled (two agreeing runs, or 3 of 4), at most 5 runs in all, when most claims are easy but some are not." +
	" receipt = inline returns a signed receipt of the decision; detached returns its receipt_id for get_receipt."

// NewServer returns an MCP server with the tools of cfg (see the package
// documentation). It fails when cfg.Caller is nil. The server is safe for
// concurrent use; serve it on any transport, such as
// mcp.NewStreamableHTTPHandler or mcp.StdioTransport.
func NewServer(cfg Config) (*mcp.Server, error) {
	if cfg.Caller == nil {
		return nil, errors.New("trustmcp: Config.Caller is nil")
	}
	impl := &mcp.Implementation{Name: cfg.Name, Version: cfg.Version}
	if impl.Name == "" {
		impl.Name = Name
	}
	if impl.Version == "" {
		impl.Version = trust.Version
	}
	s := mcp.NewServer(impl, &mcp.ServerOptions{
		Logger:       cfg.Logger,
		Capabilities: &mcp.ServerCapabilities{},
		Instructions: "vouch checks claimed results before you act, pay or settle on them: " +
			"independent workers re-run or cross-check a claim, and their agreement becomes a status, a confidence, evidence and, on request, a signed receipt.",
	})
	t := &tools{cfg: cfg, log: cfg.Logger}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if err := t.add(s); err != nil {
		return nil, err
	}
	return s, nil
}

type tools struct {
	cfg Config
	log *slog.Logger // never nil
}

// runsWorkers is the hint of the trust tools: they run workers and may
// store a receipt (additive, never destructive).
func runsWorkers() *mcp.ToolAnnotations { return &mcp.ToolAnnotations{DestructiveHint: new(false)} }

// readsOnly is the hint of the receipt tools.
func readsOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
}

// add registers the tools cfg allows on s.
func (t *tools) add(s *mcp.Server) error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	add(addTool(s, t.log, &mcp.Tool{
		Name:        ToolValidateClaim,
		Annotations: runsWorkers(),
		Title:       "Validate a claimed result",
		Description: "Check a claimed result before acting, paying or settling on it: independent workers judge whether claimed_result correctly answers input (under spec, if given). " +
			"Answers status VALID, INVALID, RETRY (no decisive majority: see retry_instructions) or NEEDS_SPEC (say what a correct result is), with confidence and evidence." + tierGuide,
	}, t.validateClaim))
	add(addTool(s, t.log, &mcp.Tool{
		Name:        ToolDelegateTask,
		Annotations: runsWorkers(),
		Title:       "Delegate a task",
		Description: "Have independent workers carry out a task (objective and/or input) and return the result a majority backs. " +
			"Answers status VALID with the result, or RETRY with the best-effort result and retry_instructions." + tierGuide,
	}, t.delegateTask))
	add(addTool(s, t.log, &mcp.Tool{
		Name:        ToolArbitrate,
		Annotations: runsWorkers(),
		Title:       "Arbitrate a dispute",
		Description: "Settle a buyer-seller dispute over a delivered result: does the seller's claimed_result meet the task (input, spec), given the dispute_context? " +
			"Answers status SELLER_VALID, SELLER_INVALID or INCONCLUSIVE, with evidence." + tierGuide,
	}, t.arbitrate))
	if t.cfg.Router != nil {
		add(addTool(s, t.log, &mcp.Tool{
			Name:        ToolFactcheck,
			Annotations: runsWorkers(),
			Title:       "Fact-check a statement",
			Description: "Check whether a statement is true on 3 (the default) or 5 independent runs; the majority decides. " +
				"Answers verdict TRUE or FALSE (empty when no majority), confidence, the consensus block and one piece of evidence per run. " +
				"Cost: replicas runs. Use 5 for statements you will act on irreversibly; mode realtime grounds the check in current sources where the workers can.",
		}, t.factcheck))
	}
	if t.cfg.Receipts != nil {
		add(addTool(s, t.log, &mcp.Tool{
			Name:        ToolGetReceipt,
			Annotations: readsOnly(),
			Title:       "Fetch a receipt",
			Description: "Fetch a receipt by receipt_id: your own receipts, and shared receipts that name you. Any other id (unknown, expired, someone else's) is the same not-found error. Costs no runs.",
		}, t.getReceipt))
		add(addTool(s, t.log, &mcp.Tool{
			Name:        ToolVerifyReceipt,
			Annotations: readsOnly(),
			Title:       "Verify a receipt",
			Description: "Check a receipt: its schema, its signature against the service's keys, and its expiry. " +
				"Answers valid and each check with its status (passed, failed, skipped). Costs no runs.",
		}, t.verifyReceipt))
	}
	add(t.addReportOutcome(s))
	return errors.Join(errs...)
}

// callerContext names the caller of req to the trust service (the UserID
// of its bearer token when there is one), and continues the caller's
// trace: the span of ctx (the tool call's, see Telemetry, or the HTTP
// request's), else the HTTP request's W3C traceparent header, is the
// parent of the trust call's span and its trace id the answer's trace_id.
func callerContext(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req == nil || req.Extra == nil {
		return ctx
	}
	if ti := req.Extra.TokenInfo; ti != nil && ti.UserID != "" {
		ctx = trust.WithCaller(ctx, ti.UserID)
	}
	if ctx.Value(callSpanKey{}) == nil { // no tools/call span: the request's trace, not the session's
		ctx = requestParent(ctx, req.Extra.Header)
	}
	if traceparent.From(ctx) != "" {
		return ctx
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		ctx = router.WithTraceID(ctx, sc.TraceID().String())
	}
	return ctx
}

// textResult is a result whose content is the one-line summary; the SDK
// adds the structured content.
func textResult(summary string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summary}}}
}

func (t *tools) validateClaim(ctx context.Context, req *mcp.CallToolRequest, args ValidateClaimArgs) (*mcp.CallToolResult, *trust.Response, error) {
	tr, err := args.request()
	if err != nil {
		return nil, nil, err
	}
	return t.call(ctx, req, ToolValidateClaim, tr)
}

func (t *tools) delegateTask(ctx context.Context, req *mcp.CallToolRequest, args DelegateTaskArgs) (*mcp.CallToolResult, *trust.Response, error) {
	tr, err := args.request()
	if err != nil {
		return nil, nil, err
	}
	return t.call(ctx, req, ToolDelegateTask, tr)
}

func (t *tools) arbitrate(ctx context.Context, req *mcp.CallToolRequest, args ArbitrateArgs) (*mcp.CallToolResult, *trust.Response, error) {
	tr, err := args.request()
	if err != nil {
		return nil, nil, err
	}
	return t.call(ctx, req, ToolArbitrate, tr)
}

// call runs a trust call for the tool name.
func (t *tools) call(ctx context.Context, req *mcp.CallToolRequest, name string, tr *trust.Request) (*mcp.CallToolResult, *trust.Response, error) {
	resp, err := t.cfg.Caller.Call(callerContext(ctx, req), tr)
	if err == nil && resp == nil {
		err = errors.New("the trust service returned no answer")
	}
	if err != nil {
		return nil, nil, t.failure(ctx, name, "the trust service", err)
	}
	// A call paid in escrow records the verdict with its capture; any
	// other call keeps none (x402.ErrNotUpto).
	_ = x402.ReportVerdict(ctx, string(resp.Status))
	return textResult(summary.Trust(resp)), resp, nil
}

func (t *tools) factcheck(ctx context.Context, req *mcp.CallToolRequest, args FactcheckArgs) (*mcp.CallToolResult, *router.FactcheckResponse, error) {
	fr, err := args.request()
	if err != nil {
		return nil, nil, err
	}
	resp, err := t.cfg.Router.Factcheck(callerContext(ctx, req), fr)
	if err == nil && resp == nil {
		err = errors.New("the router returned no answer")
	}
	if err != nil {
		return nil, nil, t.failure(ctx, ToolFactcheck, "the router", err)
	}
	return textResult(summary.Factcheck(resp)), resp, nil
}

// ReceiptResult is the answer of get_receipt.
type ReceiptResult struct {
	// Receipt is the receipt object as issued. MCP carries it as a JSON
	// value: on the way it may be written again in another spelling (the
	// SDK escapes <, > and &), which verify_receipt accepts.
	Receipt json.RawMessage `json:"receipt" jsonschema:"the receipt object as issued (v4 receipt)"`
	// ReceiptJSON is the receipt's JSON text exactly as issued, in a
	// string, which no JSON writer changes: the bytes that
	// receipt.Verify and an offline verifier check.
	ReceiptJSON string `json:"receipt_json" jsonschema:"the receipt's JSON text exactly as issued: the bytes its signature covers"`
}

func (t *tools) getReceipt(ctx context.Context, req *mcp.CallToolRequest, args GetReceiptArgs) (*mcp.CallToolResult, *ReceiptResult, error) {
	if args.ReceiptID == "" {
		return nil, nil, &ArgumentError{Argument: "receipt_id", Message: "is required: the receipt's id, rcpt_ and 26 characters"}
	}
	raw, err := t.cfg.Receipts.FetchReceipt(callerContext(ctx, req), args.ReceiptID)
	var p *problem.Details
	if errors.Is(err, receipt.ErrNotFound) || errors.As(err, &p) && p.Status == http.StatusNotFound {
		return nil, nil, fmt.Errorf("get_receipt: no receipt %q is available to this caller: unknown, expired, or not shared with it", args.ReceiptID)
	}
	if err != nil {
		return nil, nil, t.failure(ctx, ToolGetReceipt, "the receipt store", err)
	}
	summary := "receipt " + args.ReceiptID
	if r, err := receipt.Parse(raw); err == nil {
		summary = fmt.Sprintf("receipt %s: %s %s, confidence %.2f, at %s, %s, kept %s", r.ReceiptID, r.Mode,
			r.Decision.Status, r.Decision.Confidence, r.Decision.Timestamp, r.Visibility, r.TTL)
	}
	return textResult(summary), &ReceiptResult{Receipt: raw, ReceiptJSON: string(raw)}, nil
}

func (t *tools) verifyReceipt(ctx context.Context, req *mcp.CallToolRequest, _ VerifyReceiptArgs) (*mcp.CallToolResult, *receipt.VerifyResponse, error) {
	raw, err := receiptArgument(req.Params.Arguments)
	if err != nil {
		return nil, nil, err
	}
	resp, err := t.cfg.Receipts.VerifyReceipt(callerContext(ctx, req), &receipt.VerifyRequest{Receipt: raw})
	if err == nil && resp == nil {
		err = errors.New("the verifier returned no answer")
	}
	if err != nil {
		return nil, nil, t.failure(ctx, ToolVerifyReceipt, "receipt verification", err)
	}
	return textResult(verifySummary(resp)), resp, nil
}

// failure is the tool error of a failed call, as the HTTP routes answer
// it: a problem (the trust service's or the router's answer to the
// caller) as its detail, status and code; a call out of time or
// cancelled as such; ErrNoVerifier as it is. Any other error may carry
// what a caller must not see (a database's host and user, a remote
// service's address): it is logged, and the caller is told that what
// failed, named by what, is unavailable.
func (t *tools) failure(ctx context.Context, tool, what string, err error) error {
	var p *problem.Details
	switch {
	case errors.As(err, &p) && p.Status >= 400 && p.Status <= 599:
		detail := p.Detail
		if detail == "" {
			detail = p.Title
		}
		return fmt.Errorf("%s: %s (%d %s)", tool, detail, p.Status, p.Code)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: the call did not finish in time", tool)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: the call was cancelled", tool)
	case errors.Is(err, ErrNoVerifier):
		return fmt.Errorf("%s: %w", tool, ErrNoVerifier)
	}
	t.log.ErrorContext(ctx, "trustmcp: call failed", "tool", tool, "error", err)
	return fmt.Errorf("%s: %s is unavailable; try again later", tool, what)
}

// verifySummary is the text of a verify_receipt answer: the checks that
// passed or failed, or, for a server's error answer given as the receipt,
// that it is one, with its status and title.
func verifySummary(r *receipt.VerifyResponse) string {
	var failed, passed []string
	for _, c := range r.Checks {
		if c.Name == receipt.CheckSchema && len(c.Errors) == 1 && c.Errors[0].Rule == receipt.RuleErrorAnswer {
			return "not valid: the receipt argument " + c.Errors[0].Message
		}
		switch c.Status {
		case receipt.CheckFailed:
			failed = append(failed, string(c.Name))
		case receipt.CheckPassed:
			passed = append(passed, string(c.Name))
		}
	}
	if r.Valid {
		return fmt.Sprintf("valid: %s passed (receipt %s, signed by %s)", strings.Join(passed, ", "), r.ReceiptID, r.Issuer)
	}
	return fmt.Sprintf("not valid: %s failed", strings.Join(failed, ", "))
}
