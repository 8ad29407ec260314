package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
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
// ErrMalformedResponse that names the member, and no *router.Error: the
// server sent no problem.
func TestClient_repeatedMember(t *testing.T) {
	for _, body := range []string{
		`{"verdict":"INVALID","verdict":"VALID","confidence":0.9,"reasons":[],"evidence":{"runs":[],"scores":[]}}`,
		`{"verdict":"INVALID","Verdict":"VALID","confidence":0.9,"reasons":[],"evidence":{"runs":[],"scores":[]}}`,
	} {
		c := newTestClient(t, answering(t, body).URL)
		resp, err := c.ValidateV2(context.Background(), requestFor(router.OpValidateV2).(*router.ValidateV2Request))
		if !errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), "verdict") {
			t.Errorf("%s: %+v, %v, want an error wrapping ErrMalformedResponse naming verdict", body, resp, err)
		}
		var p *router.Error
		if errors.As(err, &p) {
			t.Errorf("%s: the error holds the problem %+v, want none", body, p)
		}
	}
}

// TestClient_deepAnswer checks that a Client reads a router's answer
// nested deeper than any request may be: a worker's output, echoed at
// evidence.runs[0].output, may be as deep as the worker made it.
func TestClient_deepAnswer(t *testing.T) {
	const depth = 300
	output := json.RawMessage(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
	want := &router.ValidateV2Response{Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"ok"},
		Evidence: router.ValidateEvidence{Runs: []router.Run{{SessionID: 1, Label: router.Label(router.VerdictValid), Output: output}}}}
	svc := &fakeService{hook: func(context.Context, router.Operation, any) (any, error) { return want, nil }}
	c := newTestClient(t, newTestServer(t, svc).URL)
	got, err := c.ValidateV2(context.Background(), requestFor(router.OpValidateV2).(*router.ValidateV2Request))
	if err != nil {
		t.Fatalf("ValidateV2 with an output %d levels deep: %v", depth, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
}

// TestClient_emptyAnswer checks that a 2xx answer of null, {} or one that
// lacks a member the interface always has is an error wrapping
// ErrMalformedResponse naming what is missing, for every call, rather
// than a zero result such as a verdict of "".
func TestClient_emptyAnswer(t *testing.T) {
	calls := map[string]func(*router.Client) (any, error){
		"validate_v2": func(c *router.Client) (any, error) {
			return callOp(context.Background(), c, router.OpValidateV2)
		},
		"delegate_v1": func(c *router.Client) (any, error) {
			return callOp(context.Background(), c, router.OpDelegateV1)
		},
		"validate_v3": func(c *router.Client) (any, error) {
			return callOp(context.Background(), c, router.OpValidateV3)
		},
		"factcheck_v1": func(c *router.Client) (any, error) {
			return callOp(context.Background(), c, router.OpFactcheckV1)
		},
		"ping":   func(c *router.Client) (any, error) { return nil, c.Ping(context.Background()) },
		"about":  func(c *router.Client) (any, error) { return c.About(context.Background()) },
		"status": func(c *router.Client) (any, error) { return c.Status(context.Background()) },
	}
	tests := []struct {
		call, body, want string
	}{
		{"validate_v2", `null`, "not a JSON object"},
		{"validate_v2", `{}`, `no "verdict" member`},
		{"validate_v2", `{"verdict":null,"confidence":1,"evidence":{}}`, `no "verdict" member`},
		{"validate_v2", `{"verdict":"VALID","confidence":1}`, `no "evidence" member`},
		{"delegate_v1", `{}`, `no "session_id" member`},
		{"delegate_v1", `{"session_id":1,"task_id":"t"}`, `no "task_result_output" member`},
		{"validate_v3", `{"verdict":"","confidence":0,"evidence":{}}`, `no "consensus" member`},
		{"factcheck_v1", `null`, "not a JSON object"},
		{"ping", `{}`, `no "message" member`},
		{"about", `{}`, `no "service" member`},
		{"status", `null`, "not a JSON object"},
	}
	for _, tt := range tests {
		c := newTestClient(t, answering(t, tt.body).URL)
		got, err := calls[tt.call](c)
		if !errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s answered %s: %+v, %v; want an error wrapping ErrMalformedResponse saying %s", tt.call, tt.body, got, err, tt.want)
		}
	}
}

// TestClient_answerWithoutOptionalMembers checks that the members the
// interface lets go absent or null are not required: a version 3
// answer with no winner (verdict "", result null, no reasons) and a
// status without sessions read as the router wrote them.
func TestClient_answerWithoutOptionalMembers(t *testing.T) {
	svc := &fakeService{hook: func(_ context.Context, op router.Operation, _ any) (any, error) {
		switch op {
		case router.OpDelegateV3:
			return &router.DelegateV3Response{TaskID: "t3", Result: json.RawMessage("null"), Consensus: router.ConsensusResponse{Replicas: 3, LowConfidence: true}}, nil
		case router.OpValidateV3:
			return &router.ValidateV3Response{Consensus: router.ConsensusResponse{Replicas: 3, LowConfidence: true}}, nil
		}
		return nil, errors.New("unexpected operation " + string(op))
	}}
	c := newTestClient(t, newTestServer(t, svc).URL)
	for _, op := range []router.Operation{router.OpDelegateV3, router.OpValidateV3} {
		want, _ := svc.hook(context.Background(), op, nil)
		got, err := callOp(context.Background(), c, op)
		if err != nil {
			t.Fatalf("%s without a winner: %v", op, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", op, diff)
		}
	}
	if _, err := c.Status(context.Background()); err != nil {
		t.Errorf("Status from a Service that reports no sessions: %v", err)
	}
}
