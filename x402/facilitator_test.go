package x402_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

func TestFacilitatorClient_answers(t *testing.T) {
	var requests atomic.Int32
	for _, tc := range []struct {
		name      string
		status    int
		body      string
		wantValid bool
		wantErr   bool
	}{
		{"valid", 200, `{"isValid":true,"payer":"0xabc"}`, true, false},
		{"invalid with 400", 400, `{"isValid":false,"invalidReason":"insufficient_funds"}`, false, false},
		{"server error", 500, `internal error`, false, true},
		{"not a result", 200, `{"ok":true}`, false, true},
		{"unavailable with json", 503, `{"error":"down"}`, false, true},
		// A refusal the facilitator answers with 429 or 5xx says it
		// could not decide now: no answer, to be asked again.
		{"refusal with 503", 503, `{"isValid":false,"invalidReason":"unexpected_verify_error"}`, false, true},
		{"refusal with 429", 429, `{"isValid":false,"invalidReason":"rate_limited"}`, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requests.Store(0)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				if r.Method != http.MethodPost || r.URL.Path != "/fac/verify" || r.Header.Get("Authorization") != "Bearer k" {
					t.Errorf("request %s %s auth %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
				}
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c := &x402.FacilitatorClient{URL: srv.URL + "/fac/", Prepare: func(r *http.Request) error {
				r.Header.Set("Authorization", "Bearer k")
				return nil
			}}
			p := &x402.PaymentPayload{X402Version: 2, Accepted: offer(t), Payload: []byte(`{}`)}
			vr, err := c.Verify(t.Context(), p, offer(t))
			if tc.wantErr {
				var fe *x402.FacilitatorError
				if !errors.As(err, &fe) || fe.StatusCode != tc.status || fe.Op != "verify" {
					t.Errorf("err = %v, want a *FacilitatorError for verify with status %d", err, tc.status)
				}
			} else if err != nil || vr.IsValid != tc.wantValid {
				t.Errorf("Verify = %+v, %v; want valid %v", vr, err, tc.wantValid)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("facilitator saw %d requests, want exactly 1 (no retries)", n)
			}
		})
	}
}

func TestFacilitatorHandler_supportedAndBadRequest(t *testing.T) {
	srv := httptest.NewServer(x402.NewFacilitatorHandler(&evm.Facilitator{Networks: []string{"base-sepolia"}}))
	defer srv.Close()
	c := &x402.FacilitatorClient{URL: srv.URL}
	sup, err := c.Supported(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(sup.Kinds) != 3 || sup.Kinds[0].Network != "base-sepolia" || sup.Kinds[1].Network != "eip155:84532" || sup.Kinds[2].Scheme != x402.SchemeUpto {
		t.Errorf("kinds = %+v, want exact on base-sepolia in v1 and v2, and upto in v2", sup.Kinds)
	}
	if a, err := x402.FacilitatorAddress(t.Context(), c, "base-sepolia"); err != nil || a != evm.OfflineFacilitatorAddress {
		t.Errorf("FacilitatorAddress over HTTP = %q, %v; want %s", a, err, evm.OfflineFacilitatorAddress)
	}
	resp, err := http.Post(srv.URL+"/settle", "application/json", strings.NewReader(`{"x402Version":2,"paymentPayload":{"x402Version":7}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("malformed settle: status = %d, want 400", resp.StatusCode)
	}
}

// TestFacilitatorHandler_problems: every refusal of the facilitator
// handler is a problem naming the request by its X-Request-Id and its
// path; another method on a served path is 405 with Allow, any other path
// 404.
func TestFacilitatorHandler_problems(t *testing.T) {
	srv := httptest.NewServer(x402.NewFacilitatorHandler(&evm.Facilitator{Networks: []string{"base-sepolia"}}))
	defer srv.Close()
	for _, tt := range []struct {
		method, path, body string
		status             int
		code               problem.Code
		allow              string
	}{
		{"POST", "/settle", `{"x402Version":2,"paymentPayload":{"x402Version":7}}`, 400, problem.CodeInvalidRequest, ""},
		{"POST", "/verify", `{`, 400, problem.CodeMalformedJSON, ""},
		{"GET", "/verify", "", 405, problem.CodeMethodNotAllowed, "POST"},
		{"POST", "/supported", "{}", 405, problem.CodeMethodNotAllowed, "GET, HEAD"},
		{"GET", "/discovery/resources", "", 404, problem.CodeNotFound, ""},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p problem.Details
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		id := resp.Header.Get("X-Request-Id")
		if err != nil || resp.StatusCode != tt.status || p.Code != tt.code || p.Instance != tt.path || id == "" || p.RequestID != id || resp.Header.Get("Allow") != tt.allow {
			t.Errorf("%s %s: %d %+v (X-Request-Id %q, Allow %q), %v; want %d %s naming the path and the request id, Allow %q",
				tt.method, tt.path, resp.StatusCode, p, id, resp.Header.Get("Allow"), err, tt.status, tt.code, tt.allow)
		}
	}
}

// TestFacilitatorHandler_hidesTheCause: a facilitator handler relaying to
// an upstream facilitator answers its failures with a fixed text naming
// the request, never the upstream's error (its URL, host and port), which
// goes to the handler's log.
func TestFacilitatorHandler_hidesTheCause(t *testing.T) {
	upstream := httptest.NewServer(http.NotFoundHandler())
	upstream.Close() // refuses connections: the client's error names its URL
	host := strings.TrimPrefix(upstream.URL, "http://")
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	relay := &x402.FacilitatorClient{URL: upstream.URL + "/fac/?token=s3cret"}
	srv := httptest.NewServer(x402.NewFacilitatorHandler(relay, x402.WithFacilitatorLogger(log)))
	defer srv.Close()
	body, err := json.Marshal(map[string]any{
		"x402Version":         2,
		"paymentPayload":      x402.PaymentPayload{X402Version: 2, Accepted: offer(t), Payload: []byte(`{}`)},
		"paymentRequirements": offer(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ method, path, body string }{
		{"POST", "/verify", string(body)},
		{"POST", "/settle", string(body)},
		{"GET", "/supported", ""},
	} {
		buf.Reset()
		req, _ := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var p problem.Details
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("%s: %s is not a problem: %v", tt.path, raw, err)
		}
		id := resp.Header.Get("X-Request-Id")
		if resp.StatusCode != http.StatusBadGateway || id == "" || p.RequestID != id {
			t.Errorf("%s %s: %d %+v (X-Request-Id %q); want 502 naming the request", tt.method, tt.path, resp.StatusCode, p, id)
		}
		if strings.Contains(string(raw), host) || strings.Contains(string(raw), "s3cret") {
			t.Errorf("%s %s: the answer %s shows the upstream facilitator", tt.method, tt.path, raw)
		}
		if logged := buf.String(); !strings.Contains(logged, host) || !strings.Contains(logged, id) || !strings.Contains(logged, `"level":"ERROR"`) {
			t.Errorf("%s %s: log = %s, want the cause at ERROR with the request id", tt.method, tt.path, logged)
		}
	}
}
