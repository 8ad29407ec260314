package trustpay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// FuzzPriceFunc prices any body of the x402 trust call: the handler
// then reads the body as the buyer sent it, the adaptive terms (five
// runs) price exactly a body whose policy member encoding/json reads as
// adaptive, and the fixed terms any other.
func FuzzPriceFunc(f *testing.F) {
	f.Add([]byte(`{"mode":"validation","policy":"adaptive","task":{"claimed_result":"51"}}`))
	f.Add([]byte(`{"POLICY":"adaptive"}`))
	f.Add([]byte(`{"policy":"adaptive","policy":"safe"}`))
	f.Add([]byte(`{"policy":["adaptive"]}`))
	f.Add([]byte(`not json`))
	fixed, err := evm.USDC("eip155:84532", seller, "$0.005")
	if err != nil {
		f.Fatal(err)
	}
	run, err := evm.UptoUSDC("eip155:84532", seller, "$0.001", evm.OfflineFacilitatorAddress)
	if err != nil {
		f.Fatal(err)
	}
	pf, err := trustpay.Prices{
		Fixed:  x402.Price{Accepts: []x402.PaymentRequirements{fixed}},
		PerRun: x402.Price{Accepts: []x402.PaymentRequirements{run}},
	}.PriceFunc(trust.X402CallPath)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, trust.X402CallPath, bytes.NewReader(body))
		price, ok := pf(r)
		if !ok || len(price.Accepts) != 1 {
			t.Fatalf("%q: priced %+v, %v", body, price, ok)
		}
		if got, err := io.ReadAll(r.Body); err != nil || !bytes.Equal(got, body) {
			t.Fatalf("%q: the handler reads %q (%v)", body, got, err)
		}
		var req struct {
			Policy trust.Policy `json:"policy"`
		}
		json.Unmarshal(body, &req)
		want := fixed
		if req.Policy == trust.PolicyAdaptive {
			want, want.Amount = run, "5000"
		}
		if got := price.Accepts[0]; got.Scheme != want.Scheme || got.Amount != want.Amount {
			t.Fatalf("%q (policy %q): offered %s %s, want %s %s", body, req.Policy, got.Scheme, got.Amount, want.Scheme, want.Amount)
		}
	})
}

// asked is a trust.Caller that keeps the request it is asked and
// answers VALID with its receipt.
type asked struct {
	req     *trust.Request
	receipt json.RawMessage
}

func (a *asked) Call(_ context.Context, req *trust.Request) (*trust.Response, error) {
	a.req = req
	return &trust.Response{Status: trust.StatusValid, Confidence: 1, Receipt: a.receipt}, nil
}

// FuzzGateCheck has the delivery gate judge any buyer's body and any
// seller's answer: it always asks a valid trust request, whose input is
// the buyer's JSON object or string as sent, or else the body's text,
// and whose claimed result is the seller's JSON as sent, or else its
// text; and it delivers the VALID answer with its verdict and the id of
// the receipt of the trust service's answer (a remote one's, through a
// trust.Client), when it names one.
func FuzzGateCheck(f *testing.F) {
	f.Add([]byte(`{"q":"17 * 3"}`), []byte(`{"answer":51}`), "inline", []byte(`{"receipt_id":"rcpt_1","decision":{}}`))
	f.Add([]byte(`"17 * 3"`), []byte(`51`), "", []byte(`"rcpt_1"`))
	f.Add([]byte(`[1,2]`), []byte("not json \xff"), "DETACHED", []byte(`{"receipt_id":7}`))
	f.Add([]byte(``), []byte(``), "none", []byte(``))
	a := &asked{}
	gate := trustpay.Gate(trustpay.Route{Caller: a, Type: "answer"})
	f.Fuzz(func(t *testing.T, body, answer []byte, delivery string, rcpt []byte) {
		a.req, a.receipt = nil, nil
		if json.Valid(rcpt) {
			a.receipt = rcpt
		}
		r := httptest.NewRequest(http.MethodPost, "/paid", bytes.NewReader(body))
		if !bytes.ContainsAny([]byte(delivery), "\r\n\x00") {
			r.Header.Set(trustpay.HeaderReceipt, delivery)
		}
		d := gate.Check(context.Background(), r, body, &x402.BufferedResponse{Status: 200, Header: http.Header{}, Body: answer})
		if a.req == nil {
			t.Fatalf("%q, %q: no validation", body, answer)
		}
		if err := a.req.Validate(); err != nil {
			t.Fatalf("%q, %q: the gate asked an invalid request: %v", body, answer, err)
		}
		in, claim := a.req.Task.Input, a.req.Task.ClaimedResult
		var v, got any
		obj := false // the body is a JSON object or string
		if json.Unmarshal(body, &v) == nil {
			_, obj = v.(map[string]any)
			_, str := v.(string)
			obj = obj || str
		}
		text, _ := json.Marshal(string(body))
		switch {
		case obj:
			if json.Unmarshal(in.Raw(), &got) != nil || !reflect.DeepEqual(got, v) {
				t.Fatalf("%q: input %s, want the body", body, in.Raw())
			}
		case in.Kind() != router.InputString || !bytes.Equal(in.Raw(), text):
			t.Fatalf("%q: input %s of kind %s, want the body's text", body, in.Raw(), in.Kind())
		}
		if !json.Valid(claim) || json.Valid(answer) && !bytes.Equal(claim, answer) {
			t.Fatalf("%q: claimed result %q", answer, claim)
		}
		var named struct {
			ID string `json:"receipt_id"`
		}
		json.Unmarshal(a.receipt, &named)
		if !d.Deliver || d.Verdict != string(trust.StatusValid) || d.Header.Get(trustpay.HeaderStatus) != string(trust.StatusValid) || d.Header.Get(trustpay.HeaderReceipt) != named.ID {
			t.Fatalf("%q, %q: delivery %+v", body, answer, d)
		}
	})
}
