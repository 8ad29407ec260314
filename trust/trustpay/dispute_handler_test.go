package trustpay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The trust handler's x402 route, escrowed, its disputes recorded
// inside the paywall (Record within trust.WithX402): the call is
// recorded under the caller the handler names, the name its API key
// gives it or else "payer:" and its payer's address, so that this
// caller's report that the call was wrong refunds it, once, and the
// report of any other caller, the same payer under another name among
// them, refunds nothing.
func TestDisputes_recordOnTheTrustHandler(t *testing.T) {
	payer, _ := evm.NewPayer(buyerKey)
	asPayer := "payer:" + strings.ToLower(payer.Address().String())
	for _, tc := range []struct {
		name   string
		apiKey string   // sent with the paid call, if not empty
		caller string   // the name the trust handler gives the caller
		others []string // the names of other callers
	}{
		{name: "api key", apiKey: "alice-key", caller: "alice", others: []string{asPayer, "bob", trust.DefaultCaller}},
		{name: "payer", caller: asPayer, others: []string{"alice", trust.DefaultCaller}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, esc, mw := newDisputes(t, func(e *router.Engine) router.Service { return e }, "POST "+trust.X402CallPath)
			h, err := trust.NewHandler(d.Service,
				trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"alice-key": "alice", "bob-key": "bob"})),
				trust.WithX402(func(h http.Handler) http.Handler { return mw(d.Record(h)) }))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)

			body, err := json.Marshal(&trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe, Receipt: receipt.Inline(),
				Task: trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days."), ClaimedResult: trust.JSON("Refunds within 30 days.")}})
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+trust.X402CallPath, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if tc.apiKey != "" {
				req.Header.Set("Authorization", "Bearer "+tc.apiKey)
			}
			c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var answer paidAnswer
			if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK || answer.TraceID == "" || answer.Receipt.ReceiptID == "" {
				t.Fatalf("status %d, answer %+v, %v", resp.StatusCode, answer, err)
			}
			token, _ := evm.ParseAddress(usdcSepolia)
			balance := func() int64 { return esc.Balance(token, payer.Address()).Int64() }
			if got := balance(); got != openBalance-10_000 {
				t.Fatalf("after the call the buyer holds %d, want %d", got, openBalance-10_000)
			}

			for _, other := range tc.others {
				ctx := trust.WithCaller(context.Background(), other)
				if _, refunded, err := d.Feedback(ctx, answer.TraceID, false); !errors.Is(err, trust.ErrUnknownCall) || refunded || balance() != openBalance-10_000 {
					t.Errorf("%s's report: refunded %v, %v, buyer %d; want ErrUnknownCall and nothing refunded", other, refunded, err, balance())
				}
			}
			ctx := trust.WithCaller(context.Background(), tc.caller)
			o, refunded, err := d.Feedback(ctx, answer.Receipt.ReceiptID, false)
			if err != nil || !refunded || !o.Settlement.Success || o.Amount != "10000" || balance() != openBalance {
				t.Fatalf("%s's report: %+v, refunded %v, %v, buyer %d; want the capture refunded", tc.caller, o, refunded, err, balance())
			}
			again, refunded, err := d.Feedback(ctx, answer.TraceID, false)
			if err != nil || !refunded || again.Settlement.Transaction != o.Settlement.Transaction || balance() != openBalance {
				t.Errorf("%s's report again by trace id: %+v, refunded %v, %v, buyer %d; want the refund replayed", tc.caller, again, refunded, err, balance())
			}
		})
	}
}

// replayer is an x402.Replayer that answers every replay with "kept".
type replayer struct{ http.Handler }

func (replayer) ServeReplay(w http.ResponseWriter, _ *http.Request) bool {
	io.WriteString(w, "kept")
	return true
}

// TestDisputes_recordKeepsReplays: Record over an x402.Replayer (the
// trust handler's paid route is one) is one too, so that the paywall
// still answers the repeat of a settled proof from what the handler kept;
// over a plain handler it is not.
func TestDisputes_recordKeepsReplays(t *testing.T) {
	var d trustpay.Disputes
	rp, ok := d.Record(replayer{http.NotFoundHandler()}).(x402.Replayer)
	if !ok {
		t.Fatal("Record over a Replayer is not a Replayer")
	}
	w := httptest.NewRecorder()
	if !rp.ServeReplay(w, httptest.NewRequest(http.MethodPost, "/", nil)) || w.Body.String() != "kept" {
		t.Errorf("ServeReplay answered %q, want the inner replay %q", w.Body.String(), "kept")
	}
	if _, ok := d.Record(http.NotFoundHandler()).(x402.Replayer); ok {
		t.Error("Record over a plain handler claims to replay")
	}
}

// disputeOnWrite disputes the call its answer names as the answer is
// written, as a buyer that reports the call as soon as it has it does.
type disputeOnWrite struct {
	http.ResponseWriter
	d        trustpay.Disputes
	caller   string
	err      error
	refunded bool
}

func (w *disputeOnWrite) Write(b []byte) (int, error) {
	var a paidAnswer
	if json.Unmarshal(b, &a) == nil && a.TraceID != "" {
		_, w.refunded, w.err = w.d.Feedback(trust.WithCaller(context.Background(), w.caller), a.TraceID, false)
	}
	return w.ResponseWriter.Write(b)
}

// TestDisputes_recordedBeforeTheAnswerLeaves: a paid trust call,
// escrowed, is recorded for its disputes before its answer is written,
// so that its caller's report as soon as it has the answer refunds it.
func TestDisputes_recordedBeforeTheAnswerLeaves(t *testing.T) {
	d, esc, mw := newDisputes(t, func(e *router.Engine) router.Service { return e }, "POST "+trust.X402CallPath)
	h, err := trust.NewHandler(d.Service, trust.WithX402(func(h http.Handler) http.Handler { return mw(d.Record(h)) }))
	if err != nil {
		t.Fatal(err)
	}
	payer, _ := evm.NewPayer(buyerKey)
	watch := &disputeOnWrite{d: d, caller: "payer:" + strings.ToLower(payer.Address().String())}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(x402.HeaderPaymentSignature) == "" {
			h.ServeHTTP(w, r)
			return
		}
		watch.ResponseWriter = w
		h.ServeHTTP(watch, r)
	}))
	t.Cleanup(srv.Close)
	body, _ := json.Marshal(&trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days."), ClaimedResult: trust.JSON("Refunds within 30 days.")}})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+trust.X402CallPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	token, _ := evm.ParseAddress(usdcSepolia)
	if resp.StatusCode != http.StatusOK || watch.err != nil || !watch.refunded || esc.Balance(token, payer.Address()).Int64() != openBalance {
		t.Errorf("status %d; the report as the answer was written: refunded %v, %v; buyer %d; want the capture refunded",
			resp.StatusCode, watch.refunded, watch.err, esc.Balance(token, payer.Address()).Int64())
	}
}
