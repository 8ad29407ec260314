package x402

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/problem"
)

// sameJSON reports whether a and b are the same JSON value (numbers
// compared as written, object members in any order, strings as decoded).
func sameJSON(a, b []byte) bool {
	decode := func(data []byte) (any, bool) {
		if len(data) == 0 {
			return nil, true
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		return v, dec.Decode(&v) == nil
	}
	va, oka := decode(a)
	vb, okb := decode(b)
	return oka && okb && reflect.DeepEqual(va, vb)
}

// cannedAnswer is what the fuzzed facilitator answers next.
type cannedAnswer struct {
	mu     sync.Mutex
	status int
	body   []byte
}

func (a *cannedAnswer) set(status int, body []byte) {
	a.mu.Lock()
	a.status, a.body = status, body
	a.mu.Unlock()
}

func (a *cannedAnswer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	status, body := a.status, a.body
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// FuzzFacilitatorClient has a facilitator on loopback answer any status
// and body to verify, settle and supported: the client never panics; a
// failure is a *FacilitatorError naming the operation and the status,
// with at most 512 bytes of the body; a 429 or 5xx is never a result;
// and a result comes from a body carrying its member, and encodes to
// JSON that reads back to the same encoding.
func FuzzFacilitatorClient(f *testing.F) {
	f.Add(uint8(0), 200, []byte(`{"isValid":true,"payer":"0x857b06519E91e3A54538791bDbb0E22373e36b66"}`))
	f.Add(uint8(0), 400, []byte(`{"isValid":false,"invalidReason":"invalid_exact_evm_payload_signature"}`))
	f.Add(uint8(1), 200, []byte(`{"success":true,"transaction":"0x12","network":"eip155:84532","extensions":{"usage":{"info":{"amount":"5"}}}}`))
	f.Add(uint8(1), 503, []byte(`{"success":false,"errorReason":"busy"}`))
	f.Add(uint8(2), 200, []byte(`{"kinds":[{"x402Version":2,"scheme":"exact","network":"eip155:84532","extra":{"a":[1,null]}}],"signers":{"eip155:*":["0x1"]}}`))
	f.Add(uint8(2), 200, []byte(`{"kinds":null}`))
	a := &cannedAnswer{}
	srv := httptest.NewServer(a)
	f.Cleanup(srv.Close)
	c := &FacilitatorClient{URL: srv.URL, HTTPClient: srv.Client()}
	offer := PaymentRequirements{Scheme: SchemeExact, Network: "eip155:84532", Amount: "1000", Asset: "0xA", PayTo: "0xB", MaxTimeoutSeconds: 60}
	p := &PaymentPayload{X402Version: Version2, Accepted: offer, Payload: json.RawMessage(`{"signature":"0x00"}`)}
	ops := []struct{ name, member string }{{"verify", "isValid"}, {"settle", "success"}, {"supported", "kinds"}}
	f.Fuzz(func(t *testing.T, op uint8, status int, body []byte) {
		if status < 200 || status > 599 {
			status = 200 + (status%400+400)%400
		}
		a.set(status, body)
		o := ops[int(op)%len(ops)]
		var out any
		var err error
		switch o.name {
		case "verify":
			var vr *VerifyResponse
			vr, err = c.Verify(context.Background(), p, offer)
			if err == nil {
				out = vr
			}
		case "settle":
			var sr *SettleResponse
			sr, err = c.Settle(context.Background(), p, offer)
			if err == nil {
				out = sr
			}
		default:
			var sup *SupportedResponse
			sup, err = c.Supported(context.Background())
			if err == nil {
				out = sup
			}
		}
		if err != nil {
			var fe *FacilitatorError
			if !errors.As(err, &fe) || fe.Op != o.name || fe.StatusCode != status || len(fe.Body) > 512 || !strings.HasPrefix(string(body), fe.Body) {
				t.Fatalf("%s answered %d %q: error %#v", o.name, status, body, err)
			}
			return
		}
		if status == http.StatusTooManyRequests || status >= 500 {
			t.Fatalf("%s answered %d: taken as the result %+v", o.name, status, out)
		}
		var probe map[string]json.RawMessage
		if json.Unmarshal(body, &probe) != nil || probe[o.member] == nil {
			t.Fatalf("%s: result %+v from a body without %q: %q", o.name, out, o.member, body)
		}
		enc, err := json.Marshal(out)
		if err != nil {
			t.Fatalf("%s: the result %+v does not encode: %v", o.name, out, err)
		}
		again := reflect.New(reflect.TypeOf(out).Elem()).Interface()
		if err := json.Unmarshal(enc, again); err != nil {
			t.Fatalf("%s: the result %+v does not read back from %s: %v", o.name, out, enc, err)
		}
		if enc2, err := json.Marshal(again); err != nil || !bytes.Equal(enc, enc2) {
			t.Fatalf("%s: the result %+v encodes as %s, read back as %s", o.name, out, enc, enc2)
		}
	})
}

// askedFacilitator is a Facilitator that keeps what it is asked and refuses.
type askedFacilitator struct {
	p   *PaymentPayload
	req PaymentRequirements
	n   int
}

func (r *askedFacilitator) Verify(_ context.Context, p *PaymentPayload, req PaymentRequirements) (*VerifyResponse, error) {
	r.p, r.req, r.n = p, req, r.n+1
	return &VerifyResponse{InvalidReason: "recorded"}, nil
}

func (r *askedFacilitator) Settle(_ context.Context, p *PaymentPayload, req PaymentRequirements) (*SettleResponse, error) {
	r.p, r.req, r.n = p, req, r.n+1
	return &SettleResponse{ErrorReason: "recorded"}, nil
}

func (r *askedFacilitator) Supported(context.Context) (*SupportedResponse, error) {
	return &SupportedResponse{}, nil
}

// FuzzFacilitatorHandler posts any body to the facilitator API that
// NewFacilitatorHandler serves: the facilitator is asked only about a
// payload of version 1 or 2 with requirements (and a version 1 payload
// gets the resource of its requirements), anything else is a 400 or 413
// problem; and what the facilitator is asked, sent again as
// FacilitatorClient sends it, reaches it the same.
func FuzzFacilitatorHandler(f *testing.F) {
	f.Add(false, []byte(`{"x402Version":2,"paymentPayload":{"x402Version":2,"accepted":{"scheme":"exact","network":"eip155:84532","amount":"1000","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60,"extra":{"name":"USDC","version":"2"}},"payload":{"signature":"0x00"},"extensions":{"e":{"info":1}}},"paymentRequirements":{"scheme":"exact","network":"eip155:84532","amount":"1000","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60}}`))
	f.Add(true, []byte(`{"x402Version":1,"paymentPayload":{"x402Version":1,"scheme":"exact","network":"base-sepolia","payload":{"signature":"0x00"}},"paymentRequirements":{"scheme":"exact","network":"base-sepolia","maxAmountRequired":"10","asset":"0xA","payTo":"0xB","resource":"http://x/","description":"d","maxTimeoutSeconds":60}}`))
	f.Add(false, []byte(`{"paymentPayload":{"x402Version":3},"paymentRequirements":null}`))
	f.Add(true, []byte(`{"paymentPayload":{"x402Version":2,"x402Version":2},"paymentRequirements":[]}`))
	fac := &askedFacilitator{}
	h := NewFacilitatorHandler(fac)
	f.Fuzz(func(t *testing.T, settle bool, body []byte) {
		path := "/verify"
		if settle {
			path = "/settle"
		}
		ask := func(body []byte) *httptest.ResponseRecorder {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
			return w
		}
		fac.n = 0
		w := ask(body)
		if fac.n == 0 {
			var p problem.Details
			if (w.Code != 400 && w.Code != 413) || json.Unmarshal(w.Body.Bytes(), &p) != nil || p.Status != w.Code {
				t.Fatalf("%s %q: the facilitator was not asked, and the answer is %d %q", path, body, w.Code, w.Body)
			}
			return
		}
		if w.Code != http.StatusOK {
			t.Fatalf("%s %q: the facilitator answered, and the handler %d %q", path, body, w.Code, w.Body)
		}
		p, req := fac.p, fac.req
		if p.X402Version != Version1 && p.X402Version != Version2 || p.X402Version == Version1 && p.Resource == nil {
			t.Fatalf("%s %q: the facilitator was asked about %+v", path, body, p)
		}
		again, err := newFacilitatorRequest(p, req)
		if err != nil {
			t.Fatalf("the request %+v, %+v does not encode: %v", p, req, err)
		}
		fac.n = 0
		if w := ask(again); fac.n == 0 || w.Code != http.StatusOK {
			t.Fatalf("%s: %s, the request as FacilitatorClient sends it, answered %d %q", path, again, w.Code, w.Body)
		}
		p2, req2 := fac.p, fac.req
		if p.X402Version == Version1 { // version 1 names its networks; the handler keeps the name it read
			n1, _ := NetworkCAIP2(req.Network)
			n2, _ := NetworkCAIP2(req2.Network)
			req.Network, req2.Network = n1, n2
		}
		if !reflect.DeepEqual(req, req2) || p.X402Version != p2.X402Version || !reflect.DeepEqual(p.Resource, p2.Resource) ||
			p.Accepted.Scheme != p2.Accepted.Scheme || !sameJSON(p.Payload, p2.Payload) || len(p.Extensions) != len(p2.Extensions) {
			t.Fatalf("%s: asked about %+v, %+v; sent again, about %+v, %+v", path, p, req, p2, req2)
		}
		for k, v := range p.Extensions {
			if !sameJSON(v, p2.Extensions[k]) {
				t.Fatalf("%s: extension %q was %s, sent again %s", path, k, v, p2.Extensions[k])
			}
		}
	})
}

// FuzzPaymentIDOf reads the payment-identifier extension of a payer's
// proof: an id it returns is one the extension holds and is valid, and a
// refusal is a 400 problem naming the extension.
func FuzzPaymentIDOf(f *testing.F) {
	f.Add([]byte(`{"info":{"id":"pay_0123456789abcdef"}}`), true)
	f.Add([]byte(`{"info":{"id":"short"}}`), false)
	f.Add([]byte(`{"info":{"id":null},"schema":{}}`), true)
	f.Add([]byte(`[1]`), false)
	f.Fuzz(func(t *testing.T, ext []byte, required bool) {
		p := &PaymentPayload{X402Version: Version2}
		if json.Valid(ext) { // the payload decoder gave a raw message
			p.Extensions = map[string]json.RawMessage{extPaymentIdentifier: ext}
		}
		id, pd := paymentIDOf(p, required)
		if pd != nil {
			if id != "" || pd.Status != http.StatusBadRequest || len(pd.Errors) == 0 || !strings.HasPrefix(pd.Errors[0].Field, "extensions.payment-identifier") {
				t.Fatalf("paymentIDOf(%s) = %q, %+v", ext, id, pd)
			}
			return
		}
		if id == "" {
			if required {
				t.Fatalf("paymentIDOf(%s) required and found none, without a problem", ext)
			}
			return
		}
		var held struct {
			Info struct {
				ID string `json:"id"`
			} `json:"info"`
		}
		if !validPaymentID(id) || json.Unmarshal(ext, &held) != nil || held.Info.ID != id {
			t.Fatalf("paymentIDOf(%s) = %q", ext, id)
		}
	})
}

// FuzzEchoExtensions echoes the extensions of a server's terms as the
// Transport does: each is sent back, and the payment-identifier
// extension, when it is an object, with the payment's id in its info
// and the rest of its info and members as they were.
func FuzzEchoExtensions(f *testing.F) {
	f.Add([]byte(`{"info":{"required":true},"schema":{"type":"object"}}`), []byte(`{"info":{"input":{}}}`))
	f.Add([]byte(`{"info":null}`), []byte(`null`))
	f.Add([]byte(`{"info":[1,2],"x":"y"}`), []byte(`"s"`))
	f.Add([]byte(`"not an object"`), []byte(`{}`))
	const id = "pay_00112233445566778899aabbccddeeff"
	f.Fuzz(func(t *testing.T, pi, other []byte) {
		if !json.Valid(pi) || !json.Valid(other) { // the terms decoder gave raw messages
			return
		}
		ext := map[string]json.RawMessage{extPaymentIdentifier: pi, "bazaar": other}
		out := echoExtensions(ext, id)
		if len(out) != len(ext) || !bytes.Equal(out["bazaar"], other) {
			t.Fatalf("echoExtensions(%v) = %v", ext, out)
		}
		var in map[string]json.RawMessage
		if json.Unmarshal(pi, &in) != nil || in == nil {
			if !bytes.Equal(out[extPaymentIdentifier], pi) {
				t.Fatalf("a payment-identifier that is no object, %s, was sent as %s", pi, out[extPaymentIdentifier])
			}
			return
		}
		var sent map[string]json.RawMessage
		_, hadInfo := in["info"]
		if err := json.Unmarshal(out[extPaymentIdentifier], &sent); err != nil || len(sent) != len(in) && (hadInfo || len(sent) != len(in)+1) {
			t.Fatalf("payment-identifier %s sent as %s", pi, out[extPaymentIdentifier])
		}
		var info map[string]any
		if err := json.Unmarshal(sent["info"], &info); err != nil || info["id"] != id {
			t.Fatalf("payment-identifier %s sent as %s: want info.id %s", pi, out[extPaymentIdentifier], id)
		}
		var before map[string]any
		if json.Unmarshal(in["info"], &before) == nil {
			for k, v := range before {
				if k != "id" && !reflect.DeepEqual(info[k], v) {
					t.Fatalf("payment-identifier %s sent as %s: info.%s changed", pi, out[extPaymentIdentifier], k)
				}
			}
		}
		for k, v := range in {
			if k != "info" && !sameJSON(sent[k], v) {
				t.Fatalf("payment-identifier %s sent as %s: %s changed", pi, out[extPaymentIdentifier], k)
			}
		}
	})
}
