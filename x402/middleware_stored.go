package x402

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
)

// HeaderIdempotentReplayed is the response header, set to "true", of an
// answer a handler delivered again from its idempotency store without
// doing the work. [Middleware] never settles the payment of such an
// answer.
const HeaderIdempotentReplayed = "Idempotent-Replayed"

// fromStore reports whether the handler's answer, held in h, came from its
// idempotency store.
func fromStore(h http.Header) bool {
	return h.Get(HeaderIdempotentReplayed) == "true"
}

// maxStoredProbe bounds the request body the middleware holds to ask a
// Replayer for a kept answer before settling.
const maxStoredProbe = 1 << 20

// stored asks rp for the answer it kept for r's Idempotency-Key, before a
// payment that settles first is settled, and returns it held, or nil when
// rp keeps none (or r has no key, or its body is larger than
// maxStoredProbe). r's body is read and put back, so that the handler
// still reads all of it.
func stored(rp Replayer, r *http.Request) *recorder {
	if rp == nil || r.Header.Get(HeaderIdempotencyKey) == "" {
		return nil
	}
	var head []byte
	if r.Body != nil && r.Body != http.NoBody {
		var err error
		head, err = io.ReadAll(io.LimitReader(r.Body, maxStoredProbe+1))
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		if err != nil || len(head) > maxStoredProbe {
			return nil
		}
	}
	probe := r.Clone(r.Context())
	probe.Body = io.NopCloser(bytes.NewReader(head))
	rec := &recorder{header: make(http.Header)}
	if !rp.ServeReplay(rec, probe) || rec.status >= 400 {
		return nil
	}
	return rec
}

// deliverStored sends an answer the handler delivered from its store, for
// a payment that is verified and left unsettled: the answer was bought by
// an earlier payment, and the proof stays unspent (it is released).
func (pw *paywall) deliverStored(ctx context.Context, w http.ResponseWriter, rec *recorder, payer string) {
	pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: answer delivered from the store, payment verified and not settled", slog.String("payer", payer))
	rec.copyTo(w)
}

// answerStored answers r, whose proof p is too short-lived for the
// route's work, with the answer rp kept for it, if the payment verifies
// (vr, or the facilitator's verification when vr is nil) and rp kept one;
// it reports whether it answered.
func (pw *paywall) answerStored(w http.ResponseWriter, r *http.Request, rp Replayer, p *PaymentPayload, offer PaymentRequirements, vr *VerifyResponse) bool {
	if rp == nil || r.Header.Get(HeaderIdempotencyKey) == "" {
		return false
	}
	ctx := r.Context()
	if vr == nil {
		var err error
		if vr, err = pw.cfg.Facilitator.Verify(ctx, p, offer); err != nil {
			return false
		}
	}
	if !vr.IsValid {
		return false
	}
	vp := &VerifiedPayment{Payer: vr.Payer, Offer: offer, Payload: p}
	rec := stored(rp, r.WithContext(context.WithValue(ctx, verifiedCtx{}, vp)))
	if rec == nil {
		return false
	}
	pw.deliverStored(ctx, w, rec, vr.Payer)
	return true
}
