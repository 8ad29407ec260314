package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trusta2a"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The paths of the MCP endpoint: /mcp, and the public router's
// /mcp/messages.
const (
	mcpPath         = "/mcp"
	mcpMessagesPath = "/mcp/messages"
)

// agentDeps is what the MCP tools and the agent card are built on.
type agentDeps struct {
	engine   *router.Engine
	svc      *trust.Service
	receipts receipt.Store
	verifier *receipt.Verifier
	auth     router.Authenticator
	replay   x402.ReplayStore
	answers  trustmcp.AnswerStore // nil: in memory
	prices   []pricedRoute
	metrics  *metrics
	log      *slog.Logger
	obs      *observability // the paid tools' payment spans and metrics
	escrow   *demoEscrow    // the offline escrow of the paid tools' "auth-capture" offers
	ledger   x402.EscrowLedger
}

// mountAgents serves the trust tools over MCP Streamable HTTP at /mcp and
// /mcp/messages, behind the API keys, and the trust skills over A2A with
// their agent card (mountA2A). It returns the MCP server, which
// -mcp-stdio serves on stdin and stdout instead, and the A2A handler.
func mountAgents(mux *http.ServeMux, cfg config, d agentDeps) (*mcp.Server, *trusta2a.Handler, error) {
	srv, err := trustmcp.NewServer(trustmcp.Config{
		Caller:   d.svc,
		Router:   d.engine,
		Receipts: &trustmcp.StoreReceipts{Store: d.receipts, Verifier: d.verifier},
		Name:     "vouch demo server",
		// The tools' internal errors, and the SDK's warnings; not its
		// two lines a request about sessions.
		Logger: slog.New(warnings{d.log.Handler()}),
	})
	if err != nil {
		return nil, nil, err
	}
	if cfg.mcpPaid {
		prices, err := mcpPrices(d.prices, d.escrow)
		if err != nil {
			return nil, nil, err
		}
		pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{
			Facilitator:    d.metrics.countSettlements(d.escrow.facilitator(&evm.Facilitator{})),
			Escrow:         d.escrow.config(d.ledger),
			Prices:         prices,
			Replay:         d.replay,
			Answers:        d.answers,
			Logger:         d.log,
			TracerProvider: d.obs.tracerProvider(),
			MeterProvider:  d.obs.meterProvider(),
		})
		if err != nil {
			return nil, nil, err
		}
		srv.AddReceivingMiddleware(pay)
	}
	// Last, so that a tool call's span wraps its payment's.
	srv.AddReceivingMiddleware(trustmcp.Telemetry(d.obs.tracerProvider(), d.obs.meterProvider()))
	// The HTTP server span and metrics of /mcp are those of the API's
	// routes; the tool call's span is the child of its request's.
	// Each answer carries a request id, a refusal's problem too, as the
	// API's routes do.
	h := httpapi.Instrument(httpapi.WithRequestID(requireKey(d.auth, checkMCPRequest(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: d.log})))),
		d.obs.tracerProvider(), d.obs.meterProvider(), "normal")
	mux.Handle(mcpPath, h)
	mux.Handle(mcpMessagesPath, h)
	a2a, err := mountA2A(mux, d, cfg.publicURL)
	return srv, a2a, err
}

// requireKey admits requests whose bearer key the authenticator accepts,
// and refuses the others with the 401 problem of the HTTP routes. The
// SDK's auth.RequireBearerToken then records the integration as the
// token's UserID, which the tools name to the trust service as the caller
// (and which binds an MCP session to its integration).
func requireKey(auth router.Authenticator, next http.Handler) http.Handler {
	verify := func(_ context.Context, _ string, r *http.Request) (*mcpauth.TokenInfo, error) {
		caller, err := auth(r)
		if err != nil || caller == "" {
			return nil, fmt.Errorf("%w: %v", mcpauth.ErrInvalidToken, err)
		}
		return &mcpauth.TokenInfo{UserID: caller}, nil
	}
	withToken := mcpauth.RequireBearerToken(verify, &mcpauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := auth(r)
		if err == nil && caller != "" {
			withToken.ServeHTTP(w, r)
			return
		}
		httpapi.WriteAuthError(w, r, err)
	})
}

// mcpMaxBody bounds the body of an MCP request, as the SDK bounds it.
const mcpMaxBody = 4 << 20

// checkMCPRequest answers with the API's problem the requests below,
// which the SDK's transport would refuse in plain text, and passes the
// others, their body read, to next. The transport still answers in plain
// text what it refuses after these checks: a JSON value that is no
// JSON-RPC message ({} or 1), an unknown protocol version header, and
// the like. Checked here:
//   - a method other than POST: 405 with Allow: POST (the endpoint is
//     stateless: it serves no event stream to GET, and no session to
//     DELETE, as the Streamable HTTP transport lets a server answer);
//   - a Content-Type other than application/json, with no charset or
//     charset=utf-8, or a content coding: 415, as on the API's routes;
//   - an Accept that does not list both application/json and
//     text/event-stream (or a wildcard taking them), which the transport
//     requires of a client, as the SDK reads it: 400;
//   - a body larger than mcpMaxBody (413) or not one JSON value read as
//     the API's routes read theirs (400 malformed_json, or
//     invalid_request naming a member given twice).
func checkMCPRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			httpapi.WriteProblem(w, r, problem.Newf(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed,
				"%s %s is not served; use POST (the MCP endpoint is stateless: no event stream, no session)", r.Method, r.URL.Path))
			return
		}
		if !httpapi.CheckJSONBody(w, r) {
			return
		}
		// CheckJSONBody takes application/...+json too; the SDK takes
		// only application/json.
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			w.Header().Set("Accept-Post", "application/json")
			httpapi.WriteProblem(w, r, problem.Newf(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMediaType,
				"Content-Type must be application/json (in UTF-8), got %q", r.Header.Get("Content-Type")))
			return
		}
		if jsonOK, streamOK := mcpAccepts(r.Header.Values("Accept")); !jsonOK || !streamOK {
			httpapi.WriteProblem(w, r, problem.Newf(http.StatusBadRequest, problem.CodeInvalidRequest,
				"Accept must list both application/json and text/event-stream, got %q", strings.Join(r.Header.Values("Accept"), ", ")))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, mcpMaxBody+1))
		var p *problem.Details
		switch {
		case err != nil:
			p = problem.Newf(http.StatusBadRequest, problem.CodeMalformedJSON, "reading body: %v", err)
		case len(body) > mcpMaxBody:
			p = problem.Newf(http.StatusRequestEntityTooLarge, problem.CodeBodyTooLarge, "body is larger than %d bytes", mcpMaxBody)
		default:
			errors.As(jsonbody.Unmarshal(body, new(json.RawMessage)), &p)
		}
		if p != nil {
			httpapi.WriteProblem(w, r, p)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// mcpAccepts reports whether the Accept values take JSON and an event
// stream, read as the SDK reads them: by each media range's type,
// parameters and weights ignored, a wildcard taking what it covers.
func mcpAccepts(values []string) (jsonOK, streamOK bool) {
	for _, v := range values {
		for r := range strings.SplitSeq(v, ",") {
			mt, _, _ := strings.Cut(r, ";")
			switch strings.ToLower(strings.TrimSpace(mt)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK, streamOK
}

// mcpPrices prices the tools that run workers, with -mcp-paid: the trust
// tools as the paid trust call, factcheck as a paid validation, each
// also held in the offline escrow (auth-capture, either asset-transfer
// method), captured when the tool delivers its result and voided when it
// fails. Receipts are free to fetch and verify.
func mcpPrices(prices []pricedRoute, esc *demoEscrow) (map[string]x402.Price, error) {
	byWhat := map[string]pricedRoute{}
	for _, p := range prices {
		byWhat[p.what] = p
	}
	out := map[string]x402.Price{}
	for tool, what := range map[string]string{
		trustmcp.ToolValidateClaim: "trust call",
		trustmcp.ToolDelegateTask:  "trust call",
		trustmcp.ToolArbitrate:     "trust call",
		trustmcp.ToolFactcheck:     string(router.OpFactcheckV1),
	} {
		p, ok := byWhat[what]
		if !ok {
			continue
		}
		accepts := []x402.PaymentRequirements{p.offer}
		for _, method := range []string{evm.TransferEIP3009, evm.TransferPermit2} {
			held, err := esc.offer(p.offer.PayTo, p.price, method)
			if err != nil {
				return nil, fmt.Errorf("pricing the MCP tool %s in escrow: %w", tool, err)
			}
			accepts = append(accepts, held)
		}
		out[tool] = x402.Price{Accepts: accepts, Description: "vouch demo server: MCP tool " + tool, MimeType: "application/json"}
	}
	return out, nil
}

// warnings passes on the records of level Warn and above.
type warnings struct{ slog.Handler }

func (h warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return warnings{h.Handler.WithAttrs(attrs)}
}

func (h warnings) WithGroup(name string) slog.Handler { return warnings{h.Handler.WithGroup(name)} }
