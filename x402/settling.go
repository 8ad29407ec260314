package x402

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/vouchkit/vouch/problem"
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
		if pw.settling[key] == done { // not a later note under the same key
			delete(pw.settling, key)
		}
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

// keepSettling keeps o, an Unpaid answer, as settled by this server
// from now on: its SettleBy is now plus the SettleTimeout.
func (pw *paywall) keepSettling(ctx context.Context, key string, o *Outcome, until time.Time) error {
	o.SettleBy = pw.now().Add(pw.cfg.SettleTimeout)
	return pw.outcomes.Keep(context.WithoutCancel(ctx), key, *o, until)
}

// settleAnswered keeps o, an Unpaid answer whose settlement was answered
// without settling it, as settled nowhere: a retry on any server may
// send it again at once. Should it fail, a retry waits for o's SettleBy.
// An outcome no longer Unpaid (a retry on another server settled it
// meanwhile) is left as it is.
func (pw *paywall) settleAnswered(ctx context.Context, key string, o Outcome, until time.Time) {
	ctx = context.WithoutCancel(ctx)
	if cur, ok, err := pw.outcomes.Lookup(ctx, key, pw.now()); err != nil || !ok || cur.Unpaid == nil {
		return // delivered by a retry on another server meanwhile: kept so
	}
	o.SettleBy = pw.now()
	if err := pw.outcomes.Keep(ctx, key, o, until); err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: keeping an unpaid answer", slog.String("error", err.Error()))
	}
}

// keepDelivered keeps o, an answer kept while it was settled, as
// delivered with its settlement sr.
func (pw *paywall) keepDelivered(ctx context.Context, key string, o Outcome, sr *SettleResponse, until time.Time) {
	o.Response, o.Unpaid, o.Delivered, o.Settlement, o.Usage = *o.Unpaid, nil, true, sr, nil
	if err := pw.outcomes.Keep(context.WithoutCancel(ctx), key, o, until); err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: keeping a delivery", slog.String("error", err.Error()))
	}
}

// serveUnpaid answers the retry of the request that o, an answer kept
// while it was settled (Outcome.Unpaid), answered, when its settlement is
// sent nowhere in this process. A payment the replay store records as
// settled for o's request (MarkSettled, before its delivery was kept) is
// not sent again: o is delivered with that settlement. Before o's
// SettleBy, the settlement another server sent may still go through:
// the retry is answered 503 with Retry-After. Otherwise the retry sends
// the payment its first use charged (offer, at o.Usage's amount for an
// "upto" payment), delivers o once it settles, and answers 402 with the
// facilitator's reason otherwise, o kept for a later retry. It reports
// false, having answered nothing, when another retry in this process
// began to settle it first.
func (pw *paywall) serveUnpaid(w http.ResponseWriter, r *http.Request, price Price, res ResourceInfo, p *PaymentPayload, offer PaymentRequirements, key string, until time.Time, o Outcome) bool {
	ctx := r.Context()
	answer := *o.Unpaid
	if sp, ok, err := pw.replay.LookupSettled(ctx, key, pw.now()); err == nil && ok && sp.Request == o.Request {
		// Settled and recorded, but its delivery was not kept (the store
		// failed, or its server stopped, once it settled): sent again,
		// the facilitator would refuse it as spent.
		sr := sp.Settlement
		if err := setSettlement(w.Header(), &sr, p.X402Version); err != nil {
			pw.unavailable(w, r, "encoding the settlement", err)
			return true
		}
		pw.keepDelivered(ctx, key, o, &sr, until)
		writeBuffered(w, answer)
		return true
	}
	if wait := o.SettleBy.Sub(pw.now()); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		writeProblem(w, r, problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
			"the payment's first use is settling it; send the request again with the same payment"))
		return true
	}
	end, mine := pw.claimSettling(key)
	if !mine {
		return false
	}
	defer end()
	if cur, ok, err := pw.outcomes.Lookup(ctx, key, pw.now()); err != nil || !ok || cur.Unpaid == nil || cur.SettleBy.After(pw.now()) {
		// Since o was read, settled or refused by a retry here, or sent
		// by one on another server: read again.
		end()
		return false
	}
	if o.Usage != nil {
		offer.Amount = strconv.FormatUint(o.Usage.Amount, 10)
	}
	if err := pw.keepSettling(ctx, key, &o, until); err != nil {
		pw.unavailable(w, r, "keeping the answer", err)
		return true
	}
	sr, ok := pw.settle(w, r, price, res, p, offer, key, o.Payer, o.Usage)
	if !ok {
		pw.settleAnswered(ctx, key, o, until)
		return true
	}
	pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: a kept answer settled on its retry", slog.String("payer", o.Payer))
	pw.keepDelivered(ctx, key, o, sr, until)
	end()
	writeBuffered(w, answer)
	return true
}
