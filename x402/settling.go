package x402

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// beginSettling notes that the payment under key settles in this process,
// until the returned function is first called.
func (pw *paywall) beginSettling(key string) (end func()) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.noteSettling(key)
}

// noteSettling is beginSettling, with pw.mu held.
func (pw *paywall) noteSettling(key string) (end func()) {
	done := make(chan struct{})
	if pw.settling == nil {
		pw.settling = make(map[string]chan struct{})
	}
	pw.settling[key] = done
	return sync.OnceFunc(func() {
		pw.mu.Lock()
		delete(pw.settling, key)
		pw.mu.Unlock()
		close(done)
	})
}

// claimSettling notes that the payment under key settles in this
// process now, as beginSettling does, and reports true, unless it
// settles here already: then it reports false and notes nothing.
func (pw *paywall) claimSettling(key string) (end func(), ok bool) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if _, busy := pw.settling[key]; busy {
		return nil, false
	}
	return pw.noteSettling(key), true
}

// settlingNow returns a channel closed when the payment under key, which
// settles in this process now, has settled or failed; nil when it does
// not settle here now.
func (pw *paywall) settlingNow(key string) <-chan struct{} {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.settling[key]
}

// keepDelivered keeps o, an answer kept while it was settled, as
// delivered with its settlement sr.
func (pw *paywall) keepDelivered(ctx context.Context, key string, o Outcome, sr *SettleResponse, until time.Time) {
	o.Settling, o.Delivered, o.Settlement, o.Usage = false, true, sr, nil
	if err := pw.outcomes.Keep(context.WithoutCancel(ctx), key, o, until); err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: keeping a delivery", slog.String("error", err.Error()))
	}
}

// settleKept settles again the payment of o, an answer kept while it
// was settled (Outcome.Settling) that is settling nowhere in this
// process, and delivers o once it settles; it answers 402 with the
// facilitator's reason otherwise, and o stays kept for a later retry.
// The payment is the one its first use charged: offer, at o.Usage's
// amount for an "upto" payment.
func (pw *paywall) settleKept(w http.ResponseWriter, r *http.Request, price Price, res ResourceInfo, p *PaymentPayload, offer PaymentRequirements, key string, until time.Time, o Outcome, end func()) {
	defer end()
	if o.Usage != nil {
		offer.Amount = strconv.FormatUint(o.Usage.Amount, 10)
	}
	sr, ok := pw.settle(w, r, price, res, p, offer, key, o.Payer, o.Usage)
	if !ok {
		return
	}
	pw.log.LogAttrs(r.Context(), slog.LevelInfo, "x402: a kept answer settled on its retry", slog.String("payer", o.Payer))
	pw.keepDelivered(r.Context(), key, o, sr, until)
	end()
	writeBuffered(w, o.Response)
}
