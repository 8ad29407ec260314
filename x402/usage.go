package x402

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
)

// Errors of [ReportUsage].
var (
	// ErrNotUpto: usage was reported outside a request that pays with the
	// "upto" or "auth-capture" scheme behind [Middleware], where there is
	// nothing to settle by usage.
	ErrNotUpto = errors.New("x402: the request is not paid with the upto scheme")
	// ErrUsageAboveMaximum: the usage reported costs more than the payer
	// authorized. Nothing above the authorized maximum is ever settled.
	ErrUsageAboveMaximum = errors.New("x402: usage above the authorized maximum")
	// ErrUsageClosed: usage was reported after the handler returned, when
	// the settlement was already decided.
	ErrUsageClosed = errors.New("x402: usage reported after the handler returned")
)

// ExtensionUsage is the extension of a payment response (PAYMENT-RESPONSE)
// in which [Middleware] reports the usage an "upto" payment was settled
// for: {"info": [Usage]}, so that the payer can check what it paid for.
const ExtensionUsage = "vouch-usage"

// Usage is what the handler of a request paid with "upto" used, and so
// what the payment settles.
type Usage struct {
	// Amount is the amount to settle, in atomic units of the offer's
	// asset: at most the offer's amount, the authorized maximum; zero
	// settles nothing.
	Amount uint64 `json:"amount,string"`
	// Units counts what was used, in Unit, when the price is per unit (2
	// runs, 1200 tokens); zero when not counted.
	Units uint64 `json:"units,omitempty"`
	// Unit names what Units counts, such as "run".
	Unit string `json:"unit,omitempty"`
	// MaxAmount is the authorized maximum, filled in by the middleware.
	MaxAmount uint64 `json:"maxAmount,string"`
}

// ReportUsage tells [Middleware] what the request whose context is ctx
// used, so that its "upto" payment settles u.Amount rather than the
// authorized maximum. The handler calls it before it returns; the last
// report wins. It returns an error wrapping ErrNotUpto outside such a
// request, ErrUsageAboveMaximum when u.Amount exceeds the authorized
// maximum (the report is then ignored), and ErrUsageClosed after the
// handler returned. A server that settles payments itself meters the
// work's context the same way with [MeterUsage] (trust/trustmcp's
// Paywall does, so a tool handler reports its usage with ReportUsage too).
//
// A handler of an "upto" route that reports nothing is settled for the
// whole authorized maximum, as the official x402 servers do.
func ReportUsage(ctx context.Context, u Usage) error {
	m, ok := ctx.Value(meterCtx{}).(*meter)
	if !ok {
		return ErrNotUpto
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed:
		return ErrUsageClosed
	case u.Amount > m.max:
		return fmt.Errorf("%w: %d reported, %d authorized", ErrUsageAboveMaximum, u.Amount, m.max)
	}
	u.MaxAmount = m.max
	m.usage = &u
	return nil
}

// ReportVerdict names, for the record of the "auth-capture" payment of the
// request whose context is ctx, the verdict on its answer (such as a
// trust status): the payment's [EscrowPayment].Verdict and the payment
// response's [EscrowReport].Verdict, unless the route's [DeliveryGate]
// names one. What is captured is still what the answer charges
// ([ReportUsage]). It returns ErrNotUpto outside a request paid with
// "upto" or "auth-capture" behind [Middleware] (an "upto" payment keeps
// no verdict), and ErrUsageClosed after the handler returned.
func ReportVerdict(ctx context.Context, verdict string) error {
	m, ok := ctx.Value(meterCtx{}).(*meter)
	if !ok {
		return ErrNotUpto
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrUsageClosed
	}
	m.verdict = verdict
	return nil
}

type meterCtx struct{}

// meter collects the usage of one "upto" request.
type meter struct {
	max     uint64
	mu      sync.Mutex
	usage   *Usage // nil until reported
	verdict string // ReportVerdict's
	closed  bool
}

// withMeter returns ctx with a meter for offer, when offer is "upto".
func withMeter(ctx context.Context, offer PaymentRequirements) (context.Context, *meter) {
	if offer.Scheme != SchemeUpto && offer.Scheme != SchemeAuthCapture {
		return ctx, nil
	}
	max, _ := ParseAmount(offer.Amount) // checkPrice parsed it
	m := &meter{max: max}
	return context.WithValue(ctx, meterCtx{}, m), m
}

// serve runs next on w and r, whose usage m meters, and closes m when
// next returns or panics: a report after the handler returned is refused
// (ErrUsageClosed) whether its answer settles or not. m may be nil.
func (m *meter) serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	if m != nil {
		defer m.close()
	}
	next.ServeHTTP(w, r)
}

// close refuses the reports to come.
func (m *meter) close() {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
}

// charge closes m and returns the offer to settle: offer with the amount
// used, and the usage to report, or offer unchanged (the maximum) when
// nothing was reported or m is nil.
func (m *meter) charge(offer PaymentRequirements) (PaymentRequirements, *Usage) {
	if m == nil {
		return offer, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.usage == nil {
		return offer, nil
	}
	offer.Amount = strconv.FormatUint(m.usage.Amount, 10)
	u := *m.usage
	return offer, &u
}

// withUsage adds u to the settlement's extensions.
func withUsage(sr *SettleResponse, u *Usage) {
	if u == nil || sr == nil {
		return
	}
	info, err := json.Marshal(map[string]*Usage{"info": u})
	if err != nil {
		return
	}
	ext := make(map[string]json.RawMessage, len(sr.Extensions)+1)
	for k, v := range sr.Extensions {
		ext[k] = v
	}
	ext[ExtensionUsage] = info
	sr.Extensions = ext
}

// UsageFromSettlement returns the usage a payment response reports (see
// [ExtensionUsage]), and false when it reports none.
func UsageFromSettlement(sr *SettleResponse) (Usage, bool) {
	var ext struct {
		Info *Usage `json:"info"`
	}
	if sr == nil || json.Unmarshal(sr.Extensions[ExtensionUsage], &ext) != nil || ext.Info == nil {
		return Usage{}, false
	}
	return *ext.Info, true
}

// permit2Of returns the owner, nonce and deadline of a Permit2
// authorization ("upto" on EVM networks) that p carries, or false. The
// deadline is as the payload writes it, read by [unixSeconds].
func permit2Of(p *PaymentPayload) (owner, nonce, deadline string, ok bool) {
	var up struct {
		Auth *struct {
			From     string `json:"from"`
			Nonce    string `json:"nonce"`
			Deadline string `json:"deadline"`
		} `json:"permit2Authorization"`
	}
	if json.Unmarshal(p.Payload, &up) != nil || up.Auth == nil || up.Auth.From == "" || up.Auth.Nonce == "" {
		return "", "", "", false
	}
	if _, ok := unixSeconds(up.Auth.Deadline); !ok {
		return "", "", "", false
	}
	return up.Auth.From, up.Auth.Nonce, up.Auth.Deadline, true
}

// maxUnix is the latest Unix time a time.Time holds: the seconds of
// int64 less those from year 1 to 1970.
const maxUnix = math.MaxInt64 - 62135596800

// unixSeconds reads the Unix time an authorization writes as a decimal
// integer (a uint256 on chain), and reports false when s is not one. A
// time beyond maxUnix is read as maxUnix: it is later than any time the
// middleware compares it with, and is not "expired".
func unixSeconds(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && n > 0: // beyond int64
		return maxUnix, true
	case err != nil:
		return 0, false
	}
	return min(n, maxUnix), true
}

// truncate returns the ASCII text s (a payer's decimal number), or its
// first n bytes and "…" when it is longer, for a message that quotes it.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// checkSettlement rejects what cannot settle after the work: an "upto"
// offer or a gate on a route that settles before it, and a gate without
// a check.
func checkSettlement(p Price) error {
	if p.Gate != nil && p.Gate.Check == nil {
		return errors.New("the Gate has no Check")
	}
	if p.Gate != nil && p.SettleBefore {
		return errors.New("a gated route settles after the check, so it cannot settle before the work (SettleBefore)")
	}
	for i, o := range p.Accepts {
		if o.Scheme == SchemeUpto && p.SettleBefore {
			return fmt.Errorf("offer %d: an %q offer settles the amount used, so its route cannot settle before the work (SettleBefore)", i, SchemeUpto)
		}
	}
	return nil
}

// validBefore returns the Unix time by which p's authorization must
// settle: an EIP-3009 authorization's validBefore (exclusive), a Permit2
// authorization's deadline (inclusive), read by [unixSeconds], with its
// text as the payload writes it; false for other payloads, and for a time
// that is not a decimal integer.
func validBefore(p *PaymentPayload) (vb int64, text string, ok bool) {
	if a := authorizationOf(p); a != nil {
		text = a.ValidBefore
	} else if _, _, deadline, ok := permit2Of(p); ok {
		text = deadline
	} else {
		return 0, "", false
	}
	vb, ok = unixSeconds(text)
	return vb, text, ok
}
