package x402

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// answering is a Facilitator that always gives an answer or an error: a
// nil result without an error, or a panic, is an error (the facilitator
// is then unavailable), so that a misbehaving facilitator never panics
// the middleware. A valid verification or a successful settlement that
// leaves the payer out names the signer of the payment's authorization
// (its from), which the facilitator checked: the payer is optional in
// the facilitator's answers, and the handlers that keep answers and calls
// by payer would otherwise take every such payer for one.
type answering struct{ Facilitator }

// guard returns f as an answering Facilitator.
func guard(f Facilitator) Facilitator {
	if a, ok := f.(answering); ok {
		return a
	}
	return answering{f}
}

// verifyWithin is a Facilitator whose Verify is given at most d: a
// facilitator that never answers a verification would otherwise hold
// the request, and its reservation of the proof, for as long as the
// payer waits. Settle is bounded where it is called.
type verifyWithin struct {
	Facilitator
	d time.Duration
}

func (f verifyWithin) Verify(ctx context.Context, p *PaymentPayload, r PaymentRequirements) (*VerifyResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, f.d)
	defer cancel()
	return f.Facilitator.Verify(ctx, p, r)
}

// errNoAnswer is the error of a facilitator call that returned neither a
// result nor an error.
var errNoAnswer = errors.New("the facilitator returned neither a result nor an error")

func (f answering) Verify(ctx context.Context, p *PaymentPayload, r PaymentRequirements) (vr *VerifyResponse, err error) {
	defer recovered(&err, "verify")
	vr, err = f.Facilitator.Verify(ctx, p, r)
	if err == nil && vr == nil {
		err = &FacilitatorError{Op: "verify", Err: errNoAnswer}
	}
	if err == nil && vr.IsValid && vr.Payer == "" {
		named := *vr // the facilitator's answer is its own
		named.Payer, _ = p.AuthorizationFrom()
		vr = &named
	}
	return vr, err
}

func (f answering) Settle(ctx context.Context, p *PaymentPayload, r PaymentRequirements) (sr *SettleResponse, err error) {
	defer recovered(&err, "settle")
	sr, err = f.Facilitator.Settle(ctx, p, r)
	if err == nil && sr == nil {
		err = &FacilitatorError{Op: "settle", Err: errNoAnswer}
	}
	if err == nil && sr.Success && sr.Payer == "" {
		named := *sr
		named.Payer, _ = p.AuthorizationFrom()
		sr = &named
	}
	return sr, err
}

func (f answering) Supported(ctx context.Context) (s *SupportedResponse, err error) {
	defer recovered(&err, "supported")
	s, err = f.Facilitator.Supported(ctx)
	if err == nil && s == nil {
		err = &FacilitatorError{Op: "supported", Err: errNoAnswer}
	}
	return s, err
}

// recovered turns a panic of the facilitator call op into *err.
func recovered(err *error, op string) {
	if v := recover(); v != nil {
		*err = &FacilitatorError{Op: op, Err: fmt.Errorf("the facilitator panicked: %v", v)}
	}
}

// roundTrip sends req with base, turning a nil response without an error
// into an error, as http.Client does.
func roundTrip(base http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := base.RoundTrip(req)
	if resp == nil && err == nil {
		return nil, fmt.Errorf("x402: %T returned a nil *http.Response with a nil error", base)
	}
	return resp, err
}

// payGuarded has the Payer sign a proof for offer, turning a panic of the
// Payer into an error, so that the requests waiting for the payment are
// let go.
func payGuarded(ctx context.Context, payer Payer, offer PaymentRequirements) (proof Proof, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the payer panicked: %v", v)
		}
	}()
	return payer.Pay(ctx, offer)
}
