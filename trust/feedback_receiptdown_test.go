package trust_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// downReceipts is a receipt store out of reach: every read fails.
type downReceipts struct{ *receipt.MemStore }

func (downReceipts) Get(context.Context, string, time.Time) (receipt.Record, error) {
	return receipt.Record{}, errors.New("connection refused")
}

// TestClient_Feedback_traceIDReadsNoReceipt: a report by trace_id on a
// call the service does not remember (made on another server, or never)
// is 404 unknown_call, whatever the receipt store's state: a trace id
// names no receipt, so the report does not wait on the receipt store,
// and a receipt store out of reach does not turn the 404 into a 503 the
// caller would retry for nothing.
func TestClient_Feedback_traceIDReadsNoReceipt(t *testing.T) {
	priv, _, book := feedbackBook(t)
	w := honest(0.9)
	e, err := router.NewEngine(routertest.Sessions(1, 2, w, w, w, w, w), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e, trust.WithSigningKey(priv), trust.WithReceiptStore(downReceipts{new(receipt.MemStore)}), trust.WithoutExams())
	if err != nil {
		t.Fatal(err)
	}
	_, alice, _ := feedbackServer(t, s)
	type answer struct {
		Status      int
		Code        problem.Code
		UnknownCall bool
	}
	var got answer
	err = alice.Feedback(context.Background(), "0af7651916cd43dd8448eb211c80319c", false)
	var p *trust.Error
	if errors.As(err, &p) {
		got = answer{p.Status, p.Code, errors.Is(err, trust.ErrUnknownCall)}
	}
	if diff := cmp.Diff(answer{http.StatusNotFound, problem.CodeUnknownCall, true}, got); diff != "" {
		t.Errorf("report by an unknown trace id, the receipt store down: %v (-want +got):\n%s", err, diff)
	}
}
