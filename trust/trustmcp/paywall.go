package trustmcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/x402"
)

// The _meta keys of the x402 protocol's MCP transport.
const (
	// MetaPayment carries the payment (an x402 PaymentPayload) of a tool
	// call.
	MetaPayment = "x402/payment"
	// MetaPaymentResponse carries the settlement (an x402 SettleResponse)
	// of a paid tool result.
	MetaPaymentResponse = "x402/payment-response"
	// MetaError wraps the payment terms in the text of a tool result that
	// asks for payment.
	MetaError = "x402/error"
)

// PaywallConfig configures [Paywall].
type PaywallConfig struct {
	// Facilitator verifies and settles payments. Required.
	Facilitator x402.Facilitator
	// Prices prices tools by name; a tool not named is free. Required.
	Prices map[string]x402.Price
	// Replay remembers accepted payments, so that each pays for one call;
	// nil means a new x402.MemoryReplay. Give it the store of the HTTP
	// routes' x402.Middleware and a payment is spent on either side.
	Replay x402.ReplayStore
	// Answers keeps the results that settled payments bought, so that a
	// retry of the same call with the same payment gets its result again,
	// and the result of a tool that settles after it runs while its
	// payment settles, so that the retry of a failed settlement settles
	// it and gets the result (a result it cannot keep is not settled);
	// nil means a new MemoryAnswers, and a MemoryAnswers whose Now is nil
	// is given this config's Now. Servers that share Replay between
	// processes must share Answers too (see AnswerStore; on PostgreSQL,
	// pgstore's DB.Answers). A payment whose outcome Answers keeps is
	// spent whatever Replay remembers: a Paywall whose Answers outlive a
	// restart (pgstore's) and whose Replay does not (a MemoryReplay)
	// answers the retry of a payment spent before it from what Answers
	// kept.
	Answers AnswerStore
	// Gates, by tool name, deliver and settle only the results their
	// check passes (see [ToolGate]); a tool not named is settled on any
	// result that is not a tool error.
	Gates map[string]ToolGate
	// Escrow runs the lifecycle of the tools' "auth-capture" offers (see
	// x402.EscrowConfig and the Paywall's doc); it is required when a
	// price has one, and unused otherwise. Give it the Ledger of the
	// x402.Middleware (and the escrow.Recovery) that finishes payments
	// after a restart.
	Escrow *x402.EscrowConfig
	// SettleTimeout bounds each of the facilitator's Verify and Settle
	// calls; zero means x402.DefaultSettleTimeout. A verification not
	// answered in time is a tool error, as any unavailable facilitator.
	SettleTimeout time.Duration
	// MaxValidity is the longest an authorization may stay valid after
	// it arrives (its validBefore, or a Permit2 deadline); zero means an
	// hour, as for x402.Middleware. A longer one is refused (reason
	// authorization_validity_too_long) before anything is kept of it: the
	// Paywall remembers a payment and what it bought for as long as the
	// payment can pay, and so never longer than this, whatever the payer
	// signs. Each offer's maxTimeoutSeconds, the validity the official
	// clients sign, must not exceed it, and a MemoryAnswers given as
	// Answers must keep results at least as long (its MaxRetention); the
	// one the Paywall makes when Answers is nil does. Give the same value
	// to the x402.Middleware whose Replay store the Paywall shares.
	MaxValidity time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger records verifications and settlements; nil is silent.
	Logger *slog.Logger
	// TracerProvider and MeterProvider receive the spans and metrics of
	// the payments, as x402.Middleware's (see x402.PaymentTelemetry),
	// with vouch.payment.transport "mcp"; nil means the global providers.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
}

// Paywall returns server middleware (for mcp.Server.AddReceivingMiddleware)
// that makes the priced tools pay per call, as the x402 protocol's MCP
// transport defines it, under the rules x402.Middleware applies to HTTP
// routes:
//
//   - A call without _meta["x402/payment"], or with a payment that does
//     not decode, matches none of the tool's offers, was already used,
//     carries an authorization that expires before the tool's time
//     budget and the settlement can end, counted from its arrival and
//     again once the facilitator has verified it (reason
//     authorization_validity_too_short), or stays valid for longer than
//     the Paywall remembers payments (PaywallConfig.MaxValidity, reason
//     authorization_validity_too_long), or that the facilitator rejects,
//     is answered with a tool result whose isError is set and whose
//     content[0].text is {"x402/error":{"code":402,"message":...,"data":<terms>}},
//     the terms being the version 2 PaymentRequired (resource
//     mcp://tool/<name>, the reason in error); it has no
//     structuredContent (see the package documentation). The tool does
//     not run.
//   - A call with a valid payment runs the tool under a context whose
//     deadline is the price's time budget (Price.TimeBudget, or
//     x402.DefaultTimeBudget). A tool error is returned as it is,
//     unsettled, and the payment may be sent again. Otherwise the result
//     is kept in Answers and then the payment is settled, once, on a
//     context detached from the call's and bounded by SettleTimeout, and
//     the result carries the settlement in _meta["x402/payment-response"].
//     A result Answers cannot keep is not settled: the call is answered
//     with a tool error, payment processing unavailable, and the payment
//     may be sent again. A failed settlement is answered with the terms,
//     with the failed settlement as their "x402/payment-response", instead
//     of the tool's result; the retry of the same call with the same
//     payment settles it again (an "upto" payment for the usage the tool
//     reported) and gets the kept result once it settles, without running
//     or checking the tool again (see below). A price
//     with SettleBefore settles first and runs the tool only when that
//     succeeded; the payer then pays even when the tool fails, and a
//     failure without a result (a protocol error) is answered as a tool
//     error that carries the settlement, kept for a retry as any paid
//     result.
//   - A payment of an "upto" offer settles what the tool used: the tool
//     reports it with x402.ReportUsage on the context it was given, as an
//     HTTP handler behind x402.Middleware does (the Paywall puts an
//     x402.UsageMeter there), and the settlement in
//     _meta["x402/payment-response"] reports it in its extensions
//     (x402.UsageFromSettlement). A tool that reports nothing settles the
//     whole authorized maximum, as x402.Middleware settles a handler that
//     reports nothing.
//
// A payment is accepted once (see x402.ReplayStore), and the payment
// itself names the call it paid for: the tool, its arguments (as
// canonical JSON) and the payment's payload. So that a paid result lost on
// the way (a dropped connection, a client that gave up) can still be had,
// a settled result is kept with its settlement (in Answers) and the
// settlement recorded with the payment (ReplayStore.MarkSettled) before
// it is returned, until the payment's replay record expires (the
// authorization's validBefore); a repeat of the same payment by the same
// caller (see the package doc, Who is calling) for the same tool and the
// same arguments is answered with that result and the first settlement
// in _meta["x402/payment-response"], without running the tool and
// without settling again. A tool that settles after it runs (without
// SettleBefore, and not "auth-capture") has its result kept in Answers
// before its payment is settled as well, and settled only once kept: no
// payer pays for a result its retry could not have. When the settlement
// fails, goes unanswered, or the server stops before it is answered, the
// repeat of the call, on any server sharing Answers, sends the settlement
// again and gets the kept result once it settles. A facilitator settles a
// payment at most once, so no repeat pays twice: a settlement the
// facilitator made but whose answer was lost is refused as spent when
// sent again (for the offline facilitator,
// invalid_exact_evm_nonce_already_used), and the repeat gets the terms
// with that reason. A payment whose outcome Answers keeps (its result, a
// result kept while it settles, or a gate's refusal) is spent whatever
// the replay store remembers: when a replay store that forgot it (one in
// memory, restarted) takes its repeat for a new payment, the repeat is
// answered from what Answers kept: the tool does not run, and the
// payment is not verified, again. A repeat that arrives while the first
// call runs or settles in the same process waits for it (or for its own
// context to end), and then gets the kept result, or, when the first
// call failed and freed the payment, runs as a first call; so does a
// repeat that arrives while another repeat settles a kept result. Any
// other repeat of the payment (another caller, another tool, other
// arguments, a first use with SettleBefore whose settlement failed or
// whose outcome is unknown, a result kept in an AnswerStore that this
// Paywall does not share) is answered with the terms and "the payment
// was already used". A tool with a gate (PaywallConfig.Gates, [ToolGate];
// [ValidateResult] validates the result through a trust service) is
// settled only when its gate passes the result; a refused result is a
// tool error, never settled, and the retry with the same payment gets the
// same refusal. A gate or a store that panics answers the call with a
// JSON-RPC internal error, as a tool that panics does, rather than end
// the server; the panic's value goes to the log, never to the client.
// Other methods, and tools without a price, pass through.
// Paywall fails when the configuration is unusable: no facilitator, no
// prices, a price without offers, a negative time budget or settle
// timeout, an offer whose maxTimeoutSeconds is shorter than the time an
// authorization must stay valid or longer than MaxValidity, a negative
// MaxValidity, a MemoryAnswers that keeps results for less than
// MaxValidity, an offer without a scheme, payTo or asset, on a network
// x402 does not know, or whose amount does not parse, a gate that is nil
// or on a tool without a price, or a price with SettleBefore on a tool
// that has a gate or an "upto" offer (as x402.Middleware refuses
// them on a route: both settle after the tool), or an "auth-capture"
// offer without PaywallConfig.Escrow, on a price with SettleBefore, or
// whose capture window is shorter than the offer's maxTimeoutSeconds, the
// time budget and two settlements, or longer than MaxValidity.
//
// # Escrow
//
// A tool offered with an "auth-capture" offer holds the payment in escrow
// as x402.Middleware holds it for a route (x402.Escrow runs the same
// steps for both): the terms set each such offer's
// extra.captureDeadline (now plus the capture window) and
// extra.refundDeadline, and a payment whose deadlines are not ones the
// terms could have set is refused (reason invalid_auth_capture_deadline).
// The hold is placed and recorded in the escrow ledger before the tool
// runs; the tool runs only once the hold is confirmed, and a hold refused
// is answered with the terms and the failed authorization. Then a
// delivered result (for a tool with a gate, one the gate passes) is
// captured, for what the tool reported with x402.ReportUsage or the whole
// hold, and anything else (a tool error, a refusal of the gate, a protocol
// error, which is answered as a tool error) voids the hold. The result
// carries the capture's or the void's settlement in
// _meta["x402/payment-response"], with the x402.EscrowReport in its
// extensions (x402.EscrowFromSettlement), and is kept with it as a settled
// result is, so that a retry of the same call with the same payment gets
// the same result and settlement, and no operation is sent twice. A
// capture that fails is answered with the terms and the failed
// settlement; the hold stays until it is voided or reclaimed.
func Paywall(cfg PaywallConfig) (mcp.Middleware, error) {
	if cfg.Facilitator == nil {
		return nil, errors.New("trustmcp: PaywallConfig.Facilitator is nil")
	}
	if len(cfg.Prices) == 0 {
		return nil, errors.New("trustmcp: PaywallConfig.Prices is empty")
	}
	switch {
	case cfg.SettleTimeout < 0:
		return nil, fmt.Errorf("trustmcp: PaywallConfig.SettleTimeout %s is negative", cfg.SettleTimeout)
	case cfg.SettleTimeout == 0:
		cfg.SettleTimeout = x402.DefaultSettleTimeout
	}
	switch {
	case cfg.MaxValidity < 0:
		return nil, fmt.Errorf("trustmcp: PaywallConfig.MaxValidity %s is negative", cfg.MaxValidity)
	case cfg.MaxValidity == 0:
		cfg.MaxValidity = x402.DefaultMaxValidity
	}
	if r, ok := cfg.Replay.(*x402.MemoryReplay); ok && cmp.Or(r.MaxRetention, x402.DefaultMaxValidity) < cfg.MaxValidity {
		return nil, fmt.Errorf("trustmcp: the MemoryReplay keeps a proof %s, less than PaywallConfig.MaxValidity %s: set its MaxRetention", cmp.Or(r.MaxRetention, x402.DefaultMaxValidity), cfg.MaxValidity)
	}
	if a, ok := cfg.Answers.(*MemoryAnswers); ok && a.retention() < cfg.MaxValidity {
		return nil, fmt.Errorf("trustmcp: the MemoryAnswers keeps a result %s, less than PaywallConfig.MaxValidity %s: set its MaxRetention", a.retention(), cfg.MaxValidity)
	}
	for name, g := range cfg.Gates {
		if _, ok := cfg.Prices[name]; !ok || g == nil {
			return nil, fmt.Errorf("trustmcp: PaywallConfig.Gates[%q]: a gate must be a function on a priced tool, or it never runs", name)
		}
	}
	for name, p := range cfg.Prices {
		if len(p.Accepts) == 0 {
			return nil, fmt.Errorf("trustmcp: PaywallConfig.Prices[%q] accepts no payment", name)
		}
		if p.TimeBudget < 0 {
			return nil, fmt.Errorf("trustmcp: PaywallConfig.Prices[%q]: time budget %s is negative", name, p.TimeBudget)
		}
		if p.SettleBefore {
			// As x402.Middleware: what settles before the tool runs
			// cannot wait for a check of its result or for its usage.
			if cfg.Gates[name] != nil {
				return nil, fmt.Errorf("trustmcp: PaywallConfig.Prices[%q]: a gated tool settles after its gate passes the result, so it cannot settle before the tool runs (SettleBefore)", name)
			}
			for i, o := range p.Accepts {
				if o.Scheme == x402.SchemeUpto {
					return nil, fmt.Errorf("trustmcp: PaywallConfig.Prices[%q]: offer %d: an %q offer settles the amount used, so its tool cannot settle before it runs (SettleBefore)", name, i, x402.SchemeUpto)
				}
			}
		}
		need := validity(p, cfg.SettleTimeout)
		for i, o := range p.Accepts {
			if o.Scheme == x402.SchemeAuthCapture && (cfg.Escrow == nil || cfg.Escrow.Authorizer == nil) {
				// Its hold would be placed and never captured nor voided.
				return nil, fmt.Errorf("trustmcp: PaywallConfig.Prices[%q]: offer %d: an %q offer needs PaywallConfig.Escrow with an Authorizer", name, i, x402.SchemeAuthCapture)
			}
			// As x402.Middleware checks a route's offers: the terms of one
			// that fails could not be paid.
			if err := x402.CheckOffer(o); err != nil {
				return nil, fmt.Errorf("trustmcp: PaywallConfig.Prices[%q]: offer %d: %w", name, i, err)
			}
			// A payment of any other payload is remembered for the
			// offer's timeout, at least a minute (x402.ReplayKey).
			if time.Duration(max(o.MaxTimeoutSeconds, 60))*time.Second > cfg.MaxValidity {
				return nil, fmt.Errorf("trustmcp: PaywallConfig.Prices[%q]: offer %d: maxTimeoutSeconds %d is longer than PaywallConfig.MaxValidity %s, the longest the Paywall remembers a payment",
					name, i, o.MaxTimeoutSeconds, cfg.MaxValidity)
			}
			if time.Duration(o.MaxTimeoutSeconds)*time.Second < need {
				return nil, fmt.Errorf("trustmcp: PaywallConfig.Prices[%q]: offer %d: maxTimeoutSeconds %d is shorter than the %s an authorization must stay valid (time budget and settlement)",
					name, i, o.MaxTimeoutSeconds, need)
			}
		}
	}
	pw := &paywall{cfg: cfg, replay: cfg.Replay, answers: cfg.Answers, log: cfg.Logger,
		tel: x402.NewPaymentTelemetry("mcp", cfg.TracerProvider, cfg.MeterProvider)}
	pw.cfg.Facilitator = pw.tel.Facilitator(answering{cfg.Facilitator, cfg.SettleTimeout})
	if pw.replay == nil {
		pw.replay = &x402.MemoryReplay{MaxRetention: cfg.MaxValidity}
	}
	switch a := pw.answers.(type) {
	case nil:
		pw.answers = &MemoryAnswers{MaxRetention: cfg.MaxValidity, Now: cfg.Now}
	case *MemoryAnswers:
		if a.Now == nil {
			a.Now = cfg.Now
		}
	}
	if pw.log == nil {
		pw.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Escrow != nil && cfg.Escrow.Authorizer != nil {
		esc, err := x402.NewEscrow(*cfg.Escrow, pw.cfg.Facilitator, cfg.SettleTimeout, cfg.Now, pw.log)
		if err != nil {
			return nil, fmt.Errorf("trustmcp: PaywallConfig.Escrow: %w", err)
		}
		for name, p := range cfg.Prices {
			if err := esc.Check(p, cfg.MaxValidity); err != nil {
				return nil, fmt.Errorf("trustmcp: PaywallConfig.Prices[%q]: %w", name, err)
			}
		}
		pw.escrow = esc
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || method != "tools/call" || call.Params == nil {
				return next(ctx, method, req)
			}
			price, ok := pw.cfg.Prices[call.Params.Name]
			if !ok {
				return next(ctx, method, req)
			}
			res, err := pw.serveGuarded(ctx, method, call, price, next)
			return complete(call, res), err
		}
	}, nil
}

// serveGuarded is serve, with a panic of what the Paywall calls around
// the tool (a gate, a store) turned into a JSON-RPC internal error, as
// a tool's own panic is (see recovered): the SDK runs each call in a
// goroutine of its own, where a panic would end the process. The panic's
// value and stack go to the Paywall's log only.
func (pw *paywall) serveGuarded(ctx context.Context, method string, call *mcp.CallToolRequest, price x402.Price, next mcp.MethodHandler) (res mcp.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			pw.log.ErrorContext(ctx, "trustmcp: paid call panicked", "tool", call.Params.Name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the paid call failed"}
		}
	}()
	return pw.serve(ctx, method, call, price, next)
}

type paywall struct {
	cfg     PaywallConfig
	replay  x402.ReplayStore
	answers AnswerStore
	log     *slog.Logger
	tel     *x402.PaymentTelemetry
	escrow  *x402.Escrow // nil without PaywallConfig.Escrow

	mu       sync.Mutex
	flights  map[string]*flight   // paid calls running in this process, by replay key
	answered map[string]time.Time // settlements answered here unsettled, by replay key, until their SettleBy
}
