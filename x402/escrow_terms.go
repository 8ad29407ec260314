package x402

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"time"
)

// checkEscrow rejects an "auth-capture" offer the route could not hold
// and capture in time.
func checkEscrow(p Price, e *EscrowConfig, settle, maxValidity time.Duration) error {
	for i, o := range p.Accepts {
		if o.Scheme != SchemeAuthCapture {
			continue
		}
		switch {
		case e == nil || e.Authorizer == nil:
			return fmt.Errorf("offer %d: an %q offer needs MiddlewareConfig.Escrow with an Authorizer", i, SchemeAuthCapture)
		case p.SettleBefore:
			return fmt.Errorf("offer %d: an %q offer holds before the work and captures after it, so its route cannot settle before the work (SettleBefore)", i, SchemeAuthCapture)
		}
		capture, _ := e.windows()
		need := time.Duration(o.MaxTimeoutSeconds)*time.Second + p.timeBudget() + 2*settle
		if capture < need {
			return fmt.Errorf("offer %d: the capture window %s is shorter than the offer's maxTimeoutSeconds, the time budget and two settlements (%s)", i, capture, need)
		}
		if capture > maxValidity {
			return fmt.Errorf("offer %d: the capture window %s is longer than MaxValidity %s", i, capture, maxValidity)
		}
	}
	return nil
}

// withDeadlines returns o with the capture and refund deadlines set in
// its extra, Unix seconds.
func withDeadlines(o PaymentRequirements, capture, refund int64) PaymentRequirements {
	extra := make(map[string]any, len(o.Extra)+2)
	for k, v := range o.Extra {
		extra[k] = v
	}
	extra["captureDeadline"], extra["refundDeadline"] = capture, refund
	o.Extra = extra
	return o
}

// escrowCandidates returns the "auth-capture" offers whose extra is the
// accepted offer's but for the deadlines, which each 402 answer sets.
func escrowCandidates(offers []PaymentRequirements, accepted PaymentRequirements) []PaymentRequirements {
	strip := func(extra map[string]any) string {
		m := maps.Clone(extra)
		delete(m, "captureDeadline")
		delete(m, "refundDeadline")
		b, _ := json.Marshal(m) // sorted keys, numbers as JSON spells them
		var v any
		json.Unmarshal(b, &v)
		b, _ = json.Marshal(v)
		return string(b)
	}
	want := strip(accepted.Extra)
	var out []PaymentRequirements
	for _, o := range offers {
		if o.Scheme == SchemeAuthCapture && strip(o.Extra) == want {
			out = append(out, o)
		}
	}
	return out
}

// KeepProofUntil returns how long a server must remember a proof of
// offer, and keep the outcome it buys, when it would keep them until
// until, the proof's own time: for an "auth-capture" offer with the
// deadlines its payer signed (see [Escrow.Terms]), until its capture
// deadline when that is later, since a capture left unanswered may happen
// until then (a recovery sends it again) and the retry of the proof must
// find the answer it buys; never after limit, the longest the server
// remembers a proof (its MaxValidity from now).
func KeepProofUntil(offer PaymentRequirements, until, limit time.Time) time.Time {
	cd, ok := offer.Extra["captureDeadline"].(int64)
	if offer.Scheme != SchemeAuthCapture || !ok {
		return until
	}
	if d := time.Unix(cd, 0); d.After(until) {
		until = d
	}
	if until.After(limit) {
		until = limit
	}
	return until
}

// extraDeadline reads the deadline name of an "auth-capture" offer's
// extra, Unix seconds, as JSON decodes it (float64, or json.Number from
// a decoder that keeps numbers, as the terms a Transport reads) or as
// Offer sets it (int64); false when it is not a positive whole number of
// seconds.
func extraDeadline(extra map[string]any, name string) (int64, bool) {
	var f float64
	switch v := extra[name].(type) {
	case float64: // as JSON decodes it
		f = v
	case json.Number:
		var err error
		if f, err = v.Float64(); err != nil {
			return 0, false
		}
	case int64: // as Offer sets it
		f = float64(v)
	default:
		return 0, false
	}
	if f != math.Trunc(f) || f <= 0 || f > 1<<48 {
		return 0, false
	}
	return int64(f), true
}

// signedTerms returns offer with the deadlines of accepted, the offer a
// payer signed, and false when they are not whole numbers of seconds.
func signedTerms(offer, accepted PaymentRequirements) (PaymentRequirements, bool) {
	cd, ok1 := extraDeadline(accepted.Extra, "captureDeadline")
	rd, ok2 := extraDeadline(accepted.Extra, "refundDeadline")
	if !ok1 || !ok2 {
		return offer, false
	}
	return withDeadlines(offer, cd, rd), true
}

// escrowTerms returns the route's offer with the deadlines the payer
// accepted, or the reason they are not ones the route offers.
func escrowTerms(e *EscrowConfig, settle time.Duration, offer PaymentRequirements, accepted PaymentRequirements, price Price, now time.Time) (PaymentRequirements, string) {
	signed, ok := signedTerms(offer, accepted)
	if !ok {
		return offer, reasonCaptureDeadline + ": extra.captureDeadline and extra.refundDeadline must be the offer's"
	}
	cd, _ := extraDeadline(signed.Extra, "captureDeadline")
	rd, _ := extraDeadline(signed.Extra, "refundDeadline")
	capture, refund := e.windows()
	// The escrow refuses a capture at its deadline: the deadline must be
	// after the last moment the work and its two settlements may end.
	earliest := now.Add(price.timeBudget()+2*settle).Unix() + 1
	latest := now.Add(capture + time.Minute).Unix() // a minute of clock skew
	switch {
	case cd < earliest || cd > latest:
		return offer, fmt.Sprintf("%s: extra.captureDeadline %d is not within %d and %d", reasonCaptureDeadline, cd, earliest, latest)
	case rd != cd+int64(refund/time.Second):
		return offer, fmt.Sprintf("%s: extra.refundDeadline %d is not the captureDeadline plus %d", reasonCaptureDeadline, rd, int64(refund/time.Second))
	}
	return signed, ""
}
