package x402_test

import (
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// escrowServer serves a handler behind the Middleware on an
// "auth-capture" route held in the offline escrow, over loopback.
type escrowServer struct {
	*httptest.Server
	escrow *evm.Escrow
	ledger *x402.MemoryEscrowLedger
	offer  x402.PaymentRequirements
	payer  *countingPayer
	token  evm.Address
	runs   atomic.Int32 // the handler's runs
	fac    x402.Facilitator
}

// facilitate makes f the route's facilitator, before any request.
func (s *escrowServer) facilitate(t *testing.T, f x402.Facilitator) { s.fac = f }

// viaServer is the facilitator the server has at the time of a call.
type viaServer struct{ s *escrowServer }

func (v viaServer) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	return v.s.fac.Verify(ctx, p, r)
}

func (v viaServer) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	return v.s.fac.Settle(ctx, p, r)
}

func (v viaServer) Supported(ctx context.Context) (*x402.SupportedResponse, error) {
	return v.s.fac.Supported(ctx)
}

func newEscrowServer(t *testing.T, open int64, gate *x402.DeliveryGate, handler http.HandlerFunc) *escrowServer {
	return newEscrowServerOf(t, open, gate, handler, evm.TransferEIP3009)
}

// newEscrowServerOf is newEscrowServer with one offer for each of the
// asset-transfer methods, in that order.
func newEscrowServerOf(t *testing.T, open int64, gate *x402.DeliveryGate, handler http.HandlerFunc, methods ...string) *escrowServer {
	t.Helper()
	return newEscrowServerWith(t, open, gate, handler, nil, methods...)
}

// newEscrowServerWith is newEscrowServerOf whose middleware's
// configuration configure changes (nil changes nothing).
func newEscrowServerWith(t *testing.T, open int64, gate *x402.DeliveryGate, handler http.HandlerFunc, configure func(*x402.MiddlewareConfig), methods ...string) *escrowServer {
	t.Helper()
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	var offers []x402.PaymentRequirements
	for _, m := range methods {
		o, err := evm.AuthCaptureUSDC("base-sepolia", payTo, "$0.05", operator, authorizer.Address())
		if err != nil {
			t.Fatal(err)
		}
		o.Extra["assetTransferMethod"] = m
		offers = append(offers, o)
	}
	offer := offers[0]
	s := &escrowServer{escrow: &evm.Escrow{OpenBalance: big.NewInt(open)}, ledger: &x402.MemoryEscrowLedger{}, offer: offer, payer: newPayer(t)}
	s.token, _ = evm.ParseAddress(acUSDC)
	s.fac = s.escrow
	cfg := x402.MiddlewareConfig{
		Facilitator: viaServer{s},
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: offers, Gate: gate}},
		Escrow:      &x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, Ledger: s.ledger},
	}
	if configure != nil {
		configure(&cfg)
	}
	mw, err := x402.Middleware(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.runs.Add(1)
		handler(w, r)
	})))
	t.Cleanup(s.Close)
	return s
}

// balances returns what the payer and the receiver hold.
func (s *escrowServer) balances() (payer, receiver int64) {
	to, _ := evm.ParseAddress(payTo)
	return s.escrow.Balance(s.token, s.payer.Address()).Int64(), s.escrow.Balance(s.token, to).Int64()
}

// proof returns a payment header for the route, read from its 402 answer.
func (s *escrowServer) proof(t *testing.T) string {
	t.Helper()
	resp, err := s.Client().Post(s.URL+"/paid", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pr, err := x402.DecodePaymentRequired(resp.Header.Get(x402.HeaderPaymentRequired))
	if err != nil || resp.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("402 answer: status %d, %v", resp.StatusCode, err)
	}
	offer := pr.Accepts[0]
	if offer.Extra["captureDeadline"] == nil || offer.Extra["refundDeadline"] == nil {
		t.Fatalf("the offer has no deadlines: %v", offer.Extra)
	}
	proof, err := s.payer.Pay(t.Context(), offer)
	if err != nil {
		t.Fatal(err)
	}
	v, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: x402.Version2, Accepted: offer, Payload: proof.Payload})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// paid sends a paid request with the payment header proof, as paidAt.
func (s *escrowServer) paid(t *testing.T, proof string) (*http.Response, string) {
	t.Helper()
	return paidAt(t, s.Server, proof)
}

// paidAt sends a paid request with the payment header proof to srv and
// returns the response and its body. It reports a failed request with
// t.Error and returns a response of status 0 with no header and an empty
// body, never stopping the goroutine, so that it may run on any
// goroutine and its caller's check of the status fails.
func paidAt(t *testing.T, srv *httptest.Server, proof string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/paid", strings.NewReader(`{"claim":"Paris"}`))
	if err != nil {
		t.Error(err)
		return &http.Response{Header: http.Header{}}, ""
	}
	req.Header.Set(x402.HeaderPaymentSignature, proof)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Error(err)
		return &http.Response{Header: http.Header{}}, ""
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("reading the answer: %v", err)
	}
	return resp, string(body)
}

// escrowOf returns the settlement and the escrow report of a response.
// If the response has none, it reports that with t.Error and returns an
// empty settlement and report, never stopping the goroutine, so that it
// may run on any goroutine.
func escrowOf(t *testing.T, resp *http.Response) (*x402.SettleResponse, x402.EscrowReport) {
	t.Helper()
	sr, err := x402.DecodeSettleResponse(resp.Header.Get(x402.HeaderPaymentResponse))
	if err != nil {
		t.Errorf("PAYMENT-RESPONSE: %v", err)
		return &x402.SettleResponse{}, x402.EscrowReport{}
	}
	e, ok := x402.EscrowFromSettlement(sr)
	if !ok {
		t.Errorf("no escrow report in %+v", sr)
	}
	return sr, e
}

// escrowAnswer is what the answer to a paid request says of its escrow:
// status, the problem's detail, the report's state, verdict and capture,
// and whether the payment response reports success.
type escrowAnswer struct {
	Status   int
	Detail   string
	State    x402.EscrowState
	Verdict  string
	Captured string
	Success  bool
}

// escrowAnswers sends proof n times and returns each answer, and the id
// of the escrowed payment the last one reports.
func escrowAnswers(t *testing.T, s *escrowServer, proof string, n int) (got []escrowAnswer, id string) {
	t.Helper()
	for range n {
		resp, body := s.paid(t, proof)
		var p struct {
			Detail string `json:"detail"`
		}
		if err := json.Unmarshal([]byte(body), &p); err != nil {
			t.Fatalf("%d %q: %v", resp.StatusCode, body, err)
		}
		sr, e := escrowOf(t, resp)
		id = e.ID
		got = append(got, escrowAnswer{resp.StatusCode, p.Detail, e.State, e.Verdict, e.Captured, sr.Success})
	}
	return got, id
}

const openBalance = 1_000_000

// noLeak checks, after every cleanup of t (its servers closed), that no
// goroutine started by t is left.
func noLeak(t *testing.T) {
	opt := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, opt) })
}

// The lifecycle of an "auth-capture" route: the hold before the handler,
// then a capture of what the answer charges when it is delivered, and a
// void when the handler fails or the gate refuses, with the payer's
// balance where the outcome says.
func TestMiddleware_escrowLifecycle(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ok := func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) }
	gate := func(deliver bool, verdict string) *x402.DeliveryGate {
		return &x402.DeliveryGate{Check: func(ctx context.Context, req *http.Request, body []byte, resp *x402.BufferedResponse) x402.Delivery {
			if string(body) != `{"claim":"Paris"}` || string(resp.Body) != "Paris" {
				t.Errorf("the gate saw body %q, answer %q", body, resp.Body)
			}
			return x402.Delivery{Deliver: deliver, Verdict: verdict, Refusal: x402.BufferedResponse{Status: 502, Body: []byte("refused")}}
		}}
	}
	for _, tc := range []struct {
		name     string
		gate     *x402.DeliveryGate
		handler  http.HandlerFunc
		status   int
		state    x402.EscrowState
		verdict  string
		captured int64
	}{
		{"delivered: capture", nil, ok, 200, x402.EscrowCaptured, "delivered", 50_000},
		{"handler fails: void", nil, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", 500) }, 500, x402.EscrowVoided, "failed", 0},
		{"handler 404: void", nil, http.NotFound, 404, x402.EscrowVoided, "failed", 0},
		{"usage reported: capture it, void the rest", nil, func(w http.ResponseWriter, r *http.Request) {
			if err := x402.ReportUsage(r.Context(), x402.Usage{Amount: 20_000, Units: 2, Unit: "run"}); err != nil {
				t.Error(err)
			}
			w.Write([]byte("Paris"))
		}, 200, x402.EscrowCaptured, "delivered", 20_000},
		{"verdict reported", nil, func(w http.ResponseWriter, r *http.Request) {
			if err := x402.ReportVerdict(r.Context(), "VALID"); err != nil {
				t.Error(err)
			}
			w.Write([]byte("Paris"))
		}, 200, x402.EscrowCaptured, "VALID", 50_000},
		{"nothing used: void", nil, func(w http.ResponseWriter, r *http.Request) {
			x402.ReportUsage(r.Context(), x402.Usage{Amount: 0})
			w.Write([]byte("Paris"))
		}, 200, x402.EscrowVoided, "delivered", 0},
		{"gate VALID: capture", gate(true, "VALID"), ok, 200, x402.EscrowCaptured, "VALID", 50_000},
		{"gate INVALID: void", gate(false, "INVALID"), ok, 502, x402.EscrowVoided, "INVALID", 0},
		{"gate refuses without a verdict: void", gate(false, ""), ok, 502, x402.EscrowVoided, "refused", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newEscrowServer(t, openBalance, tc.gate, tc.handler)
			resp, _ := s.paid(t, s.proof(t))
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			sr, e := escrowOf(t, resp)
			if !sr.Success || e.State != tc.state || e.Verdict != tc.verdict || e.Held != "50000" || e.HoldTransaction == "" {
				t.Errorf("settlement %+v, report %+v; want success, %s, verdict %s, held 50000", sr, e, tc.state, tc.verdict)
			}
			payer, receiver := s.balances()
			if payer != openBalance-tc.captured || receiver != openBalance+tc.captured {
				t.Errorf("payer %d, receiver %d; want %d captured from the payer", payer, receiver, tc.captured)
			}
			p, err := s.ledger.Get(t.Context(), e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if p.State != tc.state || p.Verdict != tc.verdict || p.Captured != big.NewInt(tc.captured).String() || len(p.Operations) != 1 {
				t.Errorf("ledger: state %s verdict %s captured %s, %d operations", p.State, p.Verdict, p.Captured, len(p.Operations))
			}
			if s.runs.Load() != 1 {
				t.Errorf("the handler ran %d times", s.runs.Load())
			}
		})
	}
}

// A handler that panics has its hold voided: the payer's balance is back,
// and a retry of the proof gets the void, not a second lifecycle.
func TestMiddleware_escrowPanicVoids(t *testing.T) {
	s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })
	proof := s.proof(t)
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/paid", nil)
	req.Header.Set(x402.HeaderPaymentSignature, proof)
	if resp, err := s.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("status %d; want the connection aborted", resp.StatusCode)
	}
	if payer, _ := s.balances(); payer != openBalance {
		t.Errorf("payer holds %d after a panic, want %d", payer, openBalance)
	}
	held, _ := s.ledger.Unfinished(t.Context(), 0)
	if len(held) != 0 {
		t.Errorf("%d holds left unfinished", len(held))
	}
	resp, _ := s.paid(t, proof)
	if _, e := escrowOf(t, resp); resp.StatusCode != http.StatusInternalServerError || e.State != x402.EscrowVoided || e.Verdict != "failed" {
		t.Errorf("retry after a panic: status %d, report %+v; want 500 and the void", resp.StatusCode, e)
	}
	if n := s.runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times", n)
	}
}

// The Transport pays the escrow route and reads the capture.
func TestMiddleware_escrowTransport(t *testing.T) {
	s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) })
	c := &http.Client{Transport: &x402.Transport{Base: s.Client().Transport, Payer: s.payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	resp, err := c.Post(s.URL+"/paid", "text/plain", strings.NewReader("q"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, e := escrowOf(t, resp); resp.StatusCode != 200 || e.State != x402.EscrowCaptured || e.Captured != "50000" {
		t.Fatalf("status %d, report %+v", resp.StatusCode, e)
	}
}

// A route that offers both asset-transfer methods takes a payment by
// either: the offer is the one whose extra the payer accepted, and a
// Permit2 hold is captured as an ERC-3009 one is.
func TestMiddleware_escrowBothMethods(t *testing.T) {
	for _, method := range []string{evm.TransferEIP3009, evm.TransferPermit2} {
		s := newEscrowServerOf(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) }, evm.TransferEIP3009, evm.TransferPermit2)
		pick := func(req *http.Request, p *x402.Policy, offers []x402.PaymentRequirements) (x402.PaymentRequirements, error) {
			for _, o := range offers {
				if o.Extra["assetTransferMethod"] == method {
					return o, nil
				}
			}
			return x402.PaymentRequirements{}, x402.ErrNoAcceptableOffer
		}
		c := &http.Client{Transport: &x402.Transport{Base: s.Client().Transport, Payer: s.payer, Select: pick, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
		resp, err := c.Post(s.URL+"/paid", "text/plain", strings.NewReader("q"))
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		resp.Body.Close()
		if _, e := escrowOf(t, resp); resp.StatusCode != 200 || e.State != x402.EscrowCaptured || e.Captured != "50000" {
			t.Errorf("%s: status %d, report %+v", method, resp.StatusCode, e)
		}
		p, _ := s.ledger.Get(t.Context(), mustReport(t, resp).ID)
		if got := strings.Contains(string(p.Payload), "permit2Authorization"); got != (method == evm.TransferPermit2) {
			t.Errorf("%s: the hold's payload %s", method, p.Payload)
		}
	}
}

func mustReport(t *testing.T, resp *http.Response) x402.EscrowReport {
	_, e := escrowOf(t, resp)
	return e
}

// The handler of an "auth-capture" route finds the hold in the verified
// payment, already recorded in the ledger as held: the payment the
// escrow report then names.
func TestMiddleware_escrowHoldInContext(t *testing.T) {
	var s *escrowServer
	var seen x402.EscrowPayment
	var recorded x402.EscrowState
	s = newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) {
		vp, ok := x402.PaymentFromContext(r.Context())
		if !ok || vp.Escrow == nil {
			http.Error(w, "no hold in the context", http.StatusInternalServerError)
			return
		}
		seen = *vp.Escrow
		if p, err := s.ledger.Get(r.Context(), seen.ID); err == nil {
			recorded = p.State
		}
		w.Write([]byte("Paris"))
	})
	resp, body := s.paid(t, s.proof(t))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	_, e := escrowOf(t, resp)
	if seen.ID != e.ID || seen.Amount != e.Held || seen.State != x402.EscrowHeld || recorded != x402.EscrowHeld {
		t.Errorf("the handler saw %s of %s (%s, ledger %s); the report names %s of %s", seen.ID, seen.Amount, seen.State, recorded, e.ID, e.Held)
	}
}
