package trust_test

import (
	"context"
	"errors"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestHandler_emptyMember sends trust calls over loopback that give ""
// to a member whose absence means a default: each is 400 naming the
// member, and no worker runs under the default the empty value would
// have stood for.
func TestHandler_emptyMember(t *testing.T) {
	s := newBadInputServer(t, nil)
	const validation = `"mode":"validation","policy":"fast","task":{"claimed_result":"x"}}`
	for _, c := range []struct{ name, body, field string }{
		{"empty ttl", `{"receipt":{"ttl":"","mode":"inline"},` + validation, "receipt.ttl"},
		{"empty visibility", `{"receipt":{"visibility":"","mode":"inline"},` + validation, "receipt.visibility"},
		{"empty receipt mode", `{"receipt":{"mode":""},` + validation, "receipt.mode"},
		{"empty spec of a delegation", `{"task":{"spec":"","input":"x"},"mode":"delegation","policy":"fast"}`, "task.spec"},
		{"blank spec of a delegation", `{"task":{"spec":"\n","input":"x"},"mode":"delegation","policy":"fast"}`, "task.spec"},
	} {
		status, ct, raw := s.do(t, "POST", "/api/v4/trust", "k", c.body)
		checkProblem(t, c.name, status, ct, raw, 400, "invalid_request", c.field)
	}
	if n := s.workers.Calls.Load(); n != 0 {
		t.Errorf("calls with empty members ran %d jobs", n)
	}
}

// TestClient_fieldError: a trust.Client whose request the service
// refuses returns the service's 400 to the caller as a *trust.Error
// that names the member by its JSON path.
func TestClient_fieldError(t *testing.T) {
	s := newBadInputServer(t, nil)
	c, err := trust.NewClient(s.URL, trust.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Call(context.Background(), &trust.Request{Mode: trust.ModeDelegation, Policy: trust.PolicyFast,
		Task: trust.Task{Input: router.NewStringInput("x"), Spec: trust.JSON(" ")}})
	var p *trust.Error
	if !errors.As(err, &p) {
		t.Fatalf("error %v (%T), want a *trust.Error", err, err)
	}
	if p.Status != 400 || p.Code != "invalid_request" || len(p.Errors) != 1 || p.Errors[0].Field != "task.spec" {
		t.Errorf("problem %+v, want 400 invalid_request naming task.spec", p)
	}
	if n := s.workers.Calls.Load(); n != 0 {
		t.Errorf("a refused call ran %d jobs", n)
	}
}

// TestHandler_blankType: a task.type of white space only is a label
// that says nothing, as an absent one: the call runs, and the router
// (which refuses a blank claim.type) is never sent it.
func TestHandler_blankType(t *testing.T) {
	s := newBadInputServer(t, nil)
	for _, body := range []string{
		`{"task":{"type":"\n","claimed_result":"x"},"mode":"validation","policy":"fast"}`,
		`{"task":{"type":"\t","input":"x"},"mode":"delegation","policy":"fast"}`,
	} {
		if status, _, raw := s.do(t, "POST", "/api/v4/trust", "k", body); status != 200 {
			t.Errorf("%s: status %d (%s), want 200", body, status, raw)
		}
	}
}
