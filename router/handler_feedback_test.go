package router_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// feedbackServer serves e over loopback to two callers, alice (key "ka")
// and bob (key "kb"), and returns a Client for each.
func feedbackServer(t *testing.T, e *router.Engine) (url string, alice, bob *router.Client) {
	t.Helper()
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"ka": "alice", "kb": "bob"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	client := func(key string) *router.Client {
		c, err := router.NewClient(srv.URL, router.WithAPIKey(key), router.WithRetry(router.RetryPolicy{}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return srv.URL, client("ka"), client("kb")
}

// TestClient_Feedback: an outcome reported over POST /api/v3/feedback
// teaches the engine's book as Engine.Feedback does; a repeat adds
// nothing; another caller's report on the call, and a report on a trace
// id no call ran under, are the same 404 and move nothing.
func TestClient_Feedback(t *testing.T) {
	store := new(reputation.Memory)
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, alice, bob := feedbackServer(t, offEngine(t, router.WithReputation(book)))
	keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}}
	load := func() []reputation.Record {
		t.Helper()
		recs, err := store.Load(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := router.WithTraceID(context.Background(), trace)
	req := validateV3(3, router.DisagreeReturnAll)
	req.Consensus.SessionPool = []router.SessionID{1, 2, 3}
	if _, err := alice.ValidateV3(ctx, req); err != nil {
		t.Fatal(err)
	}
	before := load()

	for name, report := range map[string]func() error{
		"bob on alice's call": func() error { return bob.Feedback(ctx, trace, false) },
		"alice on no call":    func() error { return alice.Feedback(ctx, "0af7651916cd43dd8448eb211c80319c", false) },
	} {
		err := report()
		if !errors.Is(err, router.ErrUnknownCall) {
			t.Errorf("%s: %v, want ErrUnknownCall", name, err)
		}
		asError(t, err, http.StatusNotFound, problem.CodeUnknownCall)
		if diff := cmp.Diff(before, load()); diff != "" {
			t.Fatalf("%s moved the records (-before +after):\n%s", name, diff)
		}
	}

	if err := alice.Feedback(ctx, trace, false); err != nil {
		t.Fatalf("alice's report on her call: %v", err)
	}
	after := load()
	if cmp.Equal(before, after) {
		t.Fatalf("alice's report left the records as they were: %+v", after)
	}
	if err := alice.Feedback(ctx, trace, false); err != nil {
		t.Fatalf("alice's repeat: %v", err)
	}
	if diff := cmp.Diff(after, load()); diff != "" {
		t.Errorf("alice's repeat moved the records (-first +repeat):\n%s", diff)
	}
}

// TestClient_Feedback_sameAsEngine: a report over HTTP leaves the book
// as the same report in process does.
func TestClient_Feedback_sameAsEngine(t *testing.T) {
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}}
	run := func(report func(e *router.Engine, ctx context.Context) error) []reputation.Record {
		store := new(reputation.Memory)
		book, err := reputation.New(store, reputation.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e := offEngine(t, router.WithReputation(book))
		ctx := router.WithCaller(router.WithTraceID(context.Background(), trace), "alice")
		req := validateV3(3, router.DisagreeReturnAll)
		req.Consensus.SessionPool = []router.SessionID{1, 2, 3}
		if _, err := e.ValidateV3(ctx, req); err != nil {
			t.Fatal(err)
		}
		if err := report(e, ctx); err != nil {
			t.Fatal(err)
		}
		recs, err := store.Load(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	want := run(func(e *router.Engine, ctx context.Context) error { return e.Feedback(ctx, trace, true) })
	got := run(func(e *router.Engine, ctx context.Context) error {
		_, alice, _ := feedbackServer(t, e)
		return alice.Feedback(context.Background(), trace, true)
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("book after a report over HTTP (-in process +over HTTP):\n%s", diff)
	}
}

// TestHandler_feedback_reputationOff: an engine that keeps no reputation
// answers 409 reputation_off, which the Client returns as
// ErrReputationOff.
func TestHandler_feedback_reputationOff(t *testing.T) {
	_, alice, _ := feedbackServer(t, offEngine(t, router.WithReputation(nil)))
	err := alice.Feedback(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", true)
	if !errors.Is(err, router.ErrReputationOff) {
		t.Errorf("Feedback: %v, want ErrReputationOff", err)
	}
	asError(t, err, http.StatusConflict, problem.CodeReputationOff)
}

// TestHandler_feedback_badBody: a report that lacks a field, has one of
// the wrong type or one the route does not know is a 400 naming it.
func TestHandler_feedback_badBody(t *testing.T) {
	url, _, _ := feedbackServer(t, offEngine(t))
	for body, want := range map[string]string{
		`{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}`: "right",
		`{"right": true}`:                 "trace_id",
		`{"trace_id": "", "right": true}`: "trace_id",
		`{"trace_id": 7, "right": true}`:  "trace_id",
		`{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "right": "yes"}`:         "right",
		`{"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "right": true, "ok": 1}`: "ok",
	} {
		req, err := http.NewRequest(http.MethodPost, url+"/api/v3/feedback", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer ka")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), `"field":"`+want+`"`) {
			t.Errorf("%s: %d %s, want 400 naming %q", body, resp.StatusCode, data, want)
		}
	}
}

// TestHandler_feedback_unauthenticated: the route takes the credential
// of the calls.
func TestHandler_feedback_unauthenticated(t *testing.T) {
	url, _, _ := feedbackServer(t, offEngine(t))
	c, err := router.NewClient(url, router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	asError(t, c.Feedback(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736", true), http.StatusUnauthorized, problem.CodeUnauthorized)
}

// TestClient_FeedbackOwnKey: a report made with the context of the call
// it reports on, which names the call's Idempotency-Key
// (WithIdempotencyKey), is sent with a key of its own and taken, as is a
// second report with that context; the call repeated with its key gets
// its first answer.
func TestClient_FeedbackOwnKey(t *testing.T) {
	book, err := reputation.New(new(reputation.Memory), reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, alice, _ := feedbackServer(t, offEngine(t, router.WithReputation(book)))
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := router.WithIdempotencyKey(router.WithTraceID(t.Context(), trace), "order-42")
	req := validateV3(3, router.DisagreeReturnAll)
	req.Consensus.SessionPool = []router.SessionID{1, 2, 3}
	first, err := alice.ValidateV3(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for i, right := range []bool{true, false} {
		if err := alice.Feedback(ctx, trace, right); err != nil {
			t.Errorf("report %d with the call's context: %v", i+1, err)
		}
	}
	again, err := alice.ValidateV3(ctx, req)
	if err != nil || again.RequestID != first.RequestID || again.Verdict != first.Verdict {
		t.Errorf("the call repeated with its key: %+v, %v; want its first answer %+v", again, err, first)
	}
}

// TestClient_Feedback_badTraceID: a report whose trace_id is no W3C
// trace id, which no call runs under (WithTraceID), is a 400 naming
// trace_id with the rule "pattern", not a 404 as if the call were merely
// forgotten.
func TestClient_Feedback_badTraceID(t *testing.T) {
	book, err := reputation.New(new(reputation.Memory), reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, alice, _ := feedbackServer(t, offEngine(t, router.WithReputation(book)))
	want := []problem.FieldError{{Field: "trace_id", Rule: "pattern"}}
	for _, id := range badTraceIDs {
		p := asError(t, alice.Feedback(context.Background(), id, true), http.StatusBadRequest, problem.CodeInvalidRequest)
		got := make([]problem.FieldError, len(p.Errors))
		for i, e := range p.Errors {
			got[i] = problem.FieldError{Field: e.Field, Rule: e.Rule}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("report on trace id %q: errors (-want +got):\n%s", id, diff)
		}
	}
}
