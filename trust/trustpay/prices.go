package trustpay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
)

// AdaptiveMaxRuns is the most runs an adaptive trust call launches
// (oracle's count, see package trust): the runs its terms authorize.
const AdaptiveMaxRuns = 5

// UnitRun is the unit of a trust call charged per run, in the usage a
// payment response reports (x402.Usage.Unit).
const UnitRun = "run"

// maxPeek bounds the request body [Prices.PriceFunc] reads for its
// policy; a larger body is priced as fast, safe and oracle are.
const maxPeek = 1 << 20

// Prices prices the x402 trust call (trust.X402CallPath): fast, safe and
// oracle at a fixed price, adaptive per run.
type Prices struct {
	// Fixed is the price of a fast, safe or oracle call, and of a
	// request whose policy cannot be read (which the handler refuses,
	// settling nothing).
	Fixed x402.Price
	// PerRun is the price of an adaptive call: its offers are "upto" or
	// "auth-capture" offers whose Amount is the price of one run. The
	// terms offered authorize (or hold) AdaptiveMaxRuns times it, the
	// most the tier can spend; with [ChargeRuns] the settlement (or the
	// capture, the rest of the hold voided) charges the runs the call
	// launched.
	PerRun x402.Price
}

// PriceFunc returns an x402.MiddlewareConfig.PriceFunc for the trust
// call at path: it reads the request's policy from its body (and puts
// the body back for the handler), prices adaptive with the terms of
// PerRun and the rest with Fixed; requests other than POST to path are
// free. With no PerRun offers, adaptive is priced with Fixed, whose
// amount is then the price of its AdaptiveMaxRuns runs: [ChargeRuns]
// charges an adaptive call paid with "upto" or "auth-capture" the runs it
// launched at a fifth of it, and states that price per run. It returns an error when a PerRun offer is neither "upto" nor
// "auth-capture", its amount is not a positive decimal, or its amount
// times AdaptiveMaxRuns does not fit.
func (p Prices) PriceFunc(path string) (func(r *http.Request) (x402.Price, bool), error) {
	adaptive := p.PerRun
	adaptive.Accepts = make([]x402.PaymentRequirements, len(p.PerRun.Accepts))
	for i, o := range p.PerRun.Accepts {
		run, err := x402.ParseAmount(o.Amount)
		if err != nil {
			return nil, fmt.Errorf("trustpay: PerRun offer %d: %w", i, err)
		}
		if !perRun(o.Scheme) || run == 0 || run > ^uint64(0)/AdaptiveMaxRuns {
			return nil, fmt.Errorf("trustpay: PerRun offer %d: want an %q or %q offer of a positive price per run, got %q of %s", i, x402.SchemeUpto, x402.SchemeAuthCapture, o.Scheme, o.Amount)
		}
		o.Amount = strconv.FormatUint(run*AdaptiveMaxRuns, 10)
		adaptive.Accepts[i] = o
	}
	return func(r *http.Request) (x402.Price, bool) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			return x402.Price{}, false
		}
		if policyOf(r) == trust.PolicyAdaptive && len(adaptive.Accepts) > 0 {
			return adaptive, true
		}
		return p.Fixed, true
	}, nil
}

// perRun reports whether a payment of scheme charges what the call used.
func perRun(scheme string) bool {
	return scheme == x402.SchemeUpto || scheme == x402.SchemeAuthCapture
}

// policyOf reads the policy member of r's JSON body, and gives r its
// body back.
func policyOf(r *http.Request) trust.Policy {
	if r.Body == nil {
		return ""
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || len(body) > maxPeek {
		return ""
	}
	var req struct {
		Policy trust.Policy `json:"policy"`
	}
	json.Unmarshal(body, &req)
	return req.Policy
}

// ChargeRuns wraps the x402 trust call's handler (inside the x402
// middleware: trust.WithX402(func(h) { return paywall(ChargeRuns(h, log)) }))
// so that an adaptive call paid with "upto" is settled for the runs it
// launched: evidence.launched of the answer times the price of one run
// (the authorized maximum divided by AdaptiveMaxRuns), reported with
// x402.ReportUsage, so that the payment response's usage counts the
// runs. A fast, safe or oracle call paid with "upto" (an "upto" offer of
// [Prices].Fixed) reports nothing and settles its whole authorized
// amount, the fixed price. Calls paid otherwise, and failed answers, are
// passed through untouched. A handler that replays kept answers
// (x402.Replayer) still does. log, if not nil, records a usage that
// cannot be reported.
//
// A call paid with "auth-capture" is held in escrow, and the hold follows
// the verdict: a definitive verdict, VALID or INVALID, is what the buyer
// bought, and captures the runs an adaptive call launched or the whole
// hold (the fixed price) of any other; RETRY, NEEDS_SPEC and the other
// statuses capture nothing, so that the hold is voided (the answer is
// still delivered), as is the hold of a failed call. This differs from
// [Gate], where the buyer pays a seller for a delivery and only VALID
// captures. The trust status is the
// payment's recorded verdict (x402.ReportVerdict). Before the handler
// runs, ChargeRuns states the hold's terms on the request's context
// (trust.WithEscrow), so that the answer's evidence.payment and its
// receipt's decision.payment name the payment and what the verdict
// commits it to, which is what ChargeRuns then reports
// (trust.EscrowTerms.Commit).
func ChargeRuns(next http.Handler, log *slog.Logger) http.Handler {
	c := &charger{next: next, log: log}
	if rp, ok := next.(x402.Replayer); ok {
		return &replayingCharger{charger: c, rp: rp}
	}
	return c
}

type charger struct {
	next http.Handler
	log  *slog.Logger
}

type replayingCharger struct {
	*charger
	rp x402.Replayer
}

// ServeReplay implements x402.Replayer: a replay charges nothing again.
func (c *replayingCharger) ServeReplay(w http.ResponseWriter, r *http.Request) bool {
	return c.rp.ServeReplay(w, r)
}

func (c *charger) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	vp, ok := x402.PaymentFromContext(r.Context())
	if !ok || !perRun(vp.Offer.Scheme) {
		c.next.ServeHTTP(w, r)
		return
	}
	escrow := vp.Offer.Scheme == x402.SchemeAuthCapture
	// Only adaptive is charged per run; the other tiers keep their fixed
	// price, whatever the scheme.
	adaptive := policyOf(r) == trust.PolicyAdaptive
	held, _ := x402.ParseAmount(vp.Offer.Amount) // the middleware parsed it
	run := held / AdaptiveMaxRuns
	terms := trust.EscrowTerms{Scheme: vp.Offer.Scheme, Network: vp.Offer.Network, Asset: vp.Offer.Asset, Held: held}
	if adaptive {
		terms.PerRun = run
	}
	if escrow && vp.Escrow != nil {
		// The answer's evidence and receipt state the payment.
		terms.ID = vp.Escrow.ID
		r = r.WithContext(trust.WithEscrow(r.Context(), terms))
	}
	// The x402 middleware holds the answer back until it settles, so
	// the usage is reported in time when the handler has returned.
	tee := &tee{ResponseWriter: w}
	c.next.ServeHTTP(tee, r)
	if tee.status >= 400 {
		return
	}
	var out struct {
		Status   trust.Status `json:"status"`
		Evidence struct {
			Launched int `json:"launched"`
		} `json:"evidence"`
	}
	err := json.Unmarshal(tee.body.Bytes(), &out)
	if err == nil && escrow {
		err = x402.ReportVerdict(r.Context(), string(out.Status))
	}
	launched := uint64(max(out.Evidence.Launched, 0))
	switch {
	case err != nil:
	case escrow:
		// What the evidence and the receipt state that the verdict commits.
		capture, _ := x402.ParseAmount(terms.Commit(out.Status, out.Evidence.Launched).Capture)
		switch {
		case capture == 0:
			err = x402.ReportUsage(r.Context(), x402.Usage{Amount: 0}) // the hold is voided
		case adaptive:
			err = x402.ReportUsage(r.Context(), x402.Usage{Amount: capture, Units: launched, Unit: UnitRun})
		}
	case adaptive:
		err = x402.ReportUsage(r.Context(), x402.Usage{Amount: launched * run, Units: launched, Unit: UnitRun})
	}
	if err != nil && c.log != nil {
		c.log.WarnContext(r.Context(), "trustpay: the runs of a paid call were not reported; the authorized maximum settles", "error", err)
	}
}

// tee passes an answer on and keeps a copy of its body.
type tee struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (t *tee) WriteHeader(code int) {
	if t.status == 0 && code >= 200 {
		t.status = code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *tee) Write(p []byte) (int, error) {
	t.body.Write(p)
	return t.ResponseWriter.Write(p)
}
