package x402_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// answerWatch notes whether the functions given to AfterSettle had
// learned the payment was settled when the answer's first byte was
// written.
type answerWatch struct {
	http.ResponseWriter
	settled *atomic.Bool
	seen    *atomic.Bool
	wrote   bool
}

func (w *answerWatch) WriteHeader(status int) {
	w.note()
	w.ResponseWriter.WriteHeader(status)
}

func (w *answerWatch) Write(b []byte) (int, error) {
	w.note()
	return w.ResponseWriter.Write(b)
}

func (w *answerWatch) note() {
	if !w.wrote {
		w.wrote = true
		w.seen.Store(w.settled.Load())
	}
}

// TestMiddleware_escrowAfterSettleBeforeTheAnswer: on an "auth-capture"
// route, the function given to AfterSettle learns the capture before
// the answer is written, as on the other routes, so that what a handler
// records of a bought answer (the call a dispute names, the answer a
// retry is given) is there once its buyer has the answer.
func TestMiddleware_escrowAfterSettleBeforeTheAnswer(t *testing.T) {
	var settled, seen atomic.Bool
	s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) {
		x402.AfterSettle(r.Context(), func(ok bool) { settled.Store(ok) })
		w.Write([]byte("Paris"))
	})
	watched := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Config.Handler.ServeHTTP(&answerWatch{ResponseWriter: w, settled: &settled, seen: &seen}, r)
	}))
	t.Cleanup(watched.Close)
	resp, body := paidAt(t, watched, s.proof(t))
	if _, e := escrowOf(t, resp); resp.StatusCode != http.StatusOK || body != "Paris" || e.State != x402.EscrowCaptured {
		t.Fatalf("status %d, body %q, escrow %+v; want the answer captured", resp.StatusCode, body, e)
	}
	if !settled.Load() || !seen.Load() {
		t.Errorf("AfterSettle learned the capture: %v, before the answer was written: %v; want both", settled.Load(), seen.Load())
	}
}
