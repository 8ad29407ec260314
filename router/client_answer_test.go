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
		Evidence: router.ValidateEvidence{Runs: []router.Run{{SessionID: 1, Label: router.LabelOK, Output: output}}}}
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
