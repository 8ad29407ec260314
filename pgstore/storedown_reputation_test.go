package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestReputationStore_databaseDownFeedbackIsUnavailable: a report of a
// call's outcome (POST /api/v3/feedback, POST /api/v4/feedback by
// trace_id) to a server whose reputation book is in a database that went
// away is answered 503 unavailable, as docs/INTERFACE.md says of a store
// out of reach, and as a client retries, not 500 internal error.
func TestReputationStore_databaseDownFeedbackIsUnavailable(t *testing.T) {
	db, proxy := openBehindProxy(t)
	book, err := reputation.New(db.Reputation(), reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	valid := routertest.Verdict(router.VerdictValid)
	engine, err := router.NewEngine(routertest.Sessions(1, 3, valid, valid, valid), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(engine, trust.WithoutExams())
	if err != nil {
		t.Fatal(err)
	}
	auth := router.KeyAuthenticator(map[string]string{"ka": "alice"})
	rh, err := router.NewHandler(engine, router.WithAuthenticator(auth))
	if err != nil {
		t.Fatal(err)
	}
	th, err := trust.NewHandler(svc, trust.WithAuthenticator(auth))
	if err != nil {
		t.Fatal(err)
	}
	rsrv, tsrv := httptest.NewServer(rh), httptest.NewServer(th)
	defer rsrv.Close()
	defer tsrv.Close()
	rc, err := router.NewClient(rsrv.URL, router.WithAPIKey("ka"), router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := trust.NewClient(tsrv.URL, trust.WithAPIKey("ka"), trust.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}

	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := router.WithTraceID(context.Background(), trace)
	if _, err := rc.ValidateV3(ctx, &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{RequestID: "r", Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"a summary"`)}},
		Consensus:    router.ConsensusRequest{Replicas: 3},
	}); err != nil {
		t.Fatal(err)
	}
	resp, err := tc.Call(context.Background(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("Paris is in France."), ClaimedResult: json.RawMessage(`"Paris is French."`)}})
	if err != nil {
		t.Fatal(err)
	}

	proxy.Stop()
	type answer struct {
		Status int
		Code   problem.Code
	}
	for name, report := range map[string]func() error{
		"POST /api/v3/feedback": func() error { return rc.Feedback(ctx, trace, false) },
		"POST /api/v4/feedback": func() error { return tc.Feedback(context.Background(), resp.TraceID, false) },
	} {
		var p *problem.Details
		if err := report(); !errors.As(err, &p) {
			t.Fatalf("%s, the database down: %v (%T), want a problem", name, err, err)
		}
		if diff := cmp.Diff(answer{503, problem.CodeUnavailable}, answer{p.Status, p.Code}); diff != "" {
			t.Errorf("%s, the database down (-want +got):\n%s", name, diff)
		}
	}
}
