package trust_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// answering is a server on loopback that answers every request with 200
// and body.
func answering(t *testing.T, body string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestClient_repeatedMember checks that an answer giving a member twice,
// which encoding/json would read as its last, is an error wrapping
// ErrMalformedResponse that names the member, and no *trust.Error: the
// service sent no problem.
func TestClient_repeatedMember(t *testing.T) {
	const rest = `"result":true,"confidence":0.9,"evidence":{},"retry_instructions":null,"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","service_version":"v1"`
	for _, tt := range []struct{ body, member string }{
		{`{"status":"INVALID","status":"VALID",` + rest + `}`, "status: "},
		{`{"status":"INVALID","Status":"VALID",` + rest + `}`, "status: "},
		{`{"status":"VALID",` + rest + `,"evidence":{"verdicts":["INVALID"],"verdicts":["VALID"]}}`, "evidence: "},
		{`{"status":"VALID",` + strings.Replace(rest, `"evidence":{}`, `"evidence":{"verdicts":["INVALID"],"verdicts":["VALID"]}`, 1) + `}`, "evidence.verdicts: "},
	} {
		body := tt.body
		resp, err := newClient(t, answering(t, body).URL).Call(context.Background(), validationRequest())
		if !errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), tt.member) {
			t.Errorf("%s: %+v, %v, want an error wrapping ErrMalformedResponse naming %s", body, resp, err, tt.member)
		}
		var p *trust.Error
		if errors.As(err, &p) {
			t.Errorf("%s: the error holds the problem %+v, want none", body, p)
		}
	}

	body := `{"valid":false,"valid":true,"as_issued":true,"checks":[]}`
	resp, err := newClient(t, answering(t, body).URL).VerifyReceipt(context.Background(), &receipt.VerifyRequest{Receipt: []byte(`{}`)})
	if !errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), "valid") {
		t.Errorf("VerifyReceipt %s: %+v, %v, want an error wrapping ErrMalformedResponse naming valid", body, resp, err)
	}
}

// TestClient_emptyAnswer checks that a 2xx answer of null, {} or one that
// lacks a member the interface always has is an error wrapping
// ErrMalformedResponse naming what is missing, rather than a zero
// Response (a status of ""); and that result and retry_instructions,
// null when there are none, are not required.
func TestClient_emptyAnswer(t *testing.T) {
	ctx := context.Background()
	call := func(c *trust.Client) (any, error) { return c.Call(ctx, validationRequest()) }
	verify := func(c *trust.Client) (any, error) {
		return c.VerifyReceipt(ctx, &receipt.VerifyRequest{Receipt: []byte(`{}`)})
	}
	fetch := func(c *trust.Client) (any, error) { return c.FetchReceipt(ctx, "rcpt_1") }
	const rest = `"confidence":0.9,"evidence":{},"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`
	tests := []struct {
		name string
		do   func(*trust.Client) (any, error)
		body string
		want string // "" for no error
	}{
		{"call", call, `null`, "not a JSON object"},
		{"call", call, `{}`, `no "status" member`},
		{"call", call, `{"status":"VALID","confidence":0.9,"evidence":null}`, `no "evidence" member`},
		{"call", call, `{"status":"VALID",` + rest + `}`, ""},
		{"call", call, `{"status":"RETRY","result":null,"retry_instructions":null,` + rest + `}`, ""},
		{"verify", verify, `{}`, `no "valid" member`},
		{"verify", verify, `{"valid":true,"as_issued":true}`, `no "checks" member`},
		{"fetch", fetch, `null`, "not a JSON object"},
		{"fetch", fetch, `{}`, `no "receipt_id" member`},
	}
	for _, tt := range tests {
		got, err := tt.do(newClient(t, answering(t, tt.body).URL))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s answered %s: %v, want no error", tt.name, tt.body, err)
		case tt.want != "" && (!errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s answered %s: %+v, %v; want an error wrapping ErrMalformedResponse saying %s", tt.name, tt.body, got, err, tt.want)
		}
	}
}
