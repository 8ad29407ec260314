package x402

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// memo is a proof made, or being made, for one logical call. Every request
// that holds it either sends it or lets it go: the Budget is refunded and
// the proof forgotten only when the last holder lets it go and no request
// ever sent it, because a proof one request sent may settle whichever
// request made it.
type memo struct {
	key   string        // "" for a call that names none
	ready chan struct{} // closed when the payment was made or failed

	// Set before ready is closed, read after.
	header, value string // the header that carries the proof
	err           PaymentError
	amount        uint64
	expires       time.Time
	payErr        error // why the payment failed
	abandoned     bool  // it failed because its maker's context ended

	// Guarded by Transport.mu.
	made    bool // the proof exists (ready is closed and payErr is nil)
	holders int  // requests that hold it and have neither sent it nor let it go
	sent    bool // some request sent it
}

// payOnce returns a proof for the call named key, holding it: the proof
// already made for the call, the one being made by another request of the
// call (which it waits for, until its own ctx ends), or one it makes now.
// A request that names no call is paid on its own. made reports whether
// this request made the proof. When the request whose payment it waits for
// gives up before the proof exists, it pays itself.
func (t *Transport) payOnce(ctx context.Context, req *http.Request, key string, terms *PaymentRequired) (m *memo, made bool, err error) {
	for {
		m, joined := t.join(key)
		if !joined {
			err := t.make(ctx, req, m, terms)
			return m, true, err
		}
		select {
		case <-m.ready:
		case <-ctx.Done():
			// The payment in progress is its maker's: it goes on, and
			// the proof stays held by the requests still waiting for it.
			t.release(m)
			return nil, false, ctx.Err()
		}
		if m.payErr == nil {
			return m, false, nil
		}
		t.release(m)
		if !m.abandoned || ctx.Err() != nil {
			return nil, false, m.payErr
		}
	}
}

// join holds the proof of the call named key, made or being made, and
// reports true; or it starts a new one, held by the caller, who must make
// it, and reports false.
func (t *Transport) join(key string) (*memo, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if key != "" {
		if m := t.paid[key]; m != nil && !(m.made && !t.now().Before(m.expires)) {
			m.holders++
			return m, true
		}
	}
	m := &memo{key: key, ready: make(chan struct{}), holders: 1}
	if key != "" {
		if t.paid == nil {
			t.paid = make(map[string]*memo)
		}
		t.paid[key] = m
	}
	return m, false
}

// make has the payment of m made, in ctx, and lets the requests waiting
// for it go on. When making it panics (in the Select or the Payer's
// Supports), the payment fails before the panic goes on, so that no
// request of the call waits for it.
func (t *Transport) make(ctx context.Context, req *http.Request, m *memo, terms *PaymentRequired) (err error) {
	err = errors.New("x402: making the payment panicked")
	defer func() {
		now := t.now()
		t.mu.Lock()
		if err != nil {
			m.payErr, m.abandoned = err, ctx.Err() != nil
			m.holders--
			if m.key != "" && t.paid[m.key] == m {
				delete(t.paid, m.key)
			}
		} else {
			m.made = true
			t.sweep(now)
		}
		t.mu.Unlock()
		close(m.ready)
	}()
	return t.pay(ctx, req, m, terms)
}

// recall holds the proof made for the call named key, if there is one.
func (t *Transport) recall(key string) *memo {
	if key == "" {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.paid[key]
	if m == nil || !m.made {
		return nil
	}
	if !t.now().Before(m.expires) {
		delete(t.paid, key)
		return nil
	}
	m.holders++
	return m
}

// send records that a request holding m sends it now, unless that
// request's context has ended (err), in which case it lets m go.
func (t *Transport) send(m *memo, err error) {
	if err != nil {
		t.release(m)
		return
	}
	t.mu.Lock()
	m.sent = true
	m.holders--
	t.mu.Unlock()
}

// release lets m go for a request that holds it and will not send it. The
// last holder of a proof that no request sent forgets it and refunds it:
// the proof never left the process.
func (t *Transport) release(m *memo) {
	t.mu.Lock()
	m.holders--
	unused := m.made && m.holders == 0 && !m.sent
	if unused && m.key != "" && t.paid[m.key] == m {
		delete(t.paid, m.key)
	}
	t.mu.Unlock()
	if unused {
		t.Budget.Refund(m.amount)
	}
}

// sweep drops the expired proofs; t.mu is held.
func (t *Transport) sweep(now time.Time) {
	for k, old := range t.paid {
		if old.made && !now.Before(old.expires) {
			delete(t.paid, k)
		}
	}
}

// proofExpiry is when the proof p for offer, signed at now, can no longer
// be taken by a server: the validBefore of its EIP-3009 authorization, or
// else the offer's maxTimeoutSeconds from now; for an "auth-capture"
// offer, its capture deadline when that is later, since a server keeps
// the answer of a capture it could not finish until then, and completes
// it for the same proof (see [KeepProofUntil]), but never more than
// DefaultMaxValidity, the longest such a server remembers a proof by
// default, after now.
func proofExpiry(p *PaymentPayload, offer PaymentRequirements, now time.Time) time.Time {
	until := now.Add(time.Duration(offer.MaxTimeoutSeconds) * time.Second)
	if vb, ok := p.AuthorizationValidBefore(); ok {
		until = vb
	}
	if cd, ok := extraDeadline(offer.Extra, "captureDeadline"); ok && offer.Scheme == SchemeAuthCapture {
		d := time.Unix(cd, 0)
		if limit := now.Add(DefaultMaxValidity); d.After(limit) {
			d = limit
		}
		if d.After(until) {
			until = d
		}
	}
	return until
}
