package trusta2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// recordingCaller answers every call VALID and keeps the request it was
// given.
type recordingCaller struct {
	mu  sync.Mutex
	req *trust.Request
}

func (r *recordingCaller) Call(_ context.Context, req *trust.Request) (*trust.Response, error) {
	r.mu.Lock()
	r.req = req
	r.mu.Unlock()
	return &trust.Response{Status: trust.StatusValid, Confidence: 0.9, TraceID: "t"}, nil
}

// TestSendMessage_delegateAgreement: a data part's members are the
// arguments of the skill's MCP tool, and delegate_task's take agreement
// (exact or judged): a judged delegation is asked for over A2A 1.0 as
// over MCP.
func TestSendMessage_delegateAgreement(t *testing.T) {
	rec := &recordingCaller{}
	h, err := trusta2a.NewHandler(trusta2a.Config{Caller: rec})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer h.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1",` +
		`"parts":[{"data":{"objective":"What is 1 + 2?","agreement":"judged"},"mediaType":"application/json"}]}}}`
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Error != nil {
		t.Fatalf("SendMessage with agreement judged: error %d %s; want the call made with delegation.agreement judged", out.Error.Code, out.Error.Message)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.req == nil || rec.req.Delegation == nil || rec.req.Delegation.Agreement != trust.AgreementJudged {
		t.Fatalf("request %+v: want delegation.agreement judged", rec.req)
	}
}

// TestMessageSend_badAgreement: agreement is exact or judged, given as a
// value, and an argument of delegate_task only.
func TestMessageSend_badAgreement(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	c := f.client(t, "demo-key", nil)
	for _, tt := range []struct {
		data map[string]any
		want string
	}{
		{map[string]any{"input": "x", "agreement": ""}, `agreement: is "": leave the argument out for its default`},
		{map[string]any{"input": "x", "agreement": "similar"}, `agreement: must be exact or judged, not "similar"; allowed: exact, judged`},
		{map[string]any{"claimed_result": "x", "agreement": "judged"}, `invalid params: agreement: is not an argument of validate_claim`},
	} {
		_, err := send(t, c, a2a.DataPart{Data: tt.data})
		if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want invalid params naming %q", tt.data, err, tt.want)
		}
	}
}
