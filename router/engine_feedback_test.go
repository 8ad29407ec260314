package router_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// TestEngine_feedbackByCaller: a trace id names a call together with its
// caller. Bob reusing Alice's trace id for a call of his own reports on
// his call only, never on hers, and Alice's report still finds hers.
func TestEngine_feedbackByCaller(t *testing.T) {
	store := new(reputation.Memory)
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := offEngine(t, router.WithReputation(book))
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	alice := router.WithCaller(router.WithTraceID(context.Background(), trace), "key:alice")
	bob := router.WithCaller(router.WithTraceID(context.Background(), trace), "key:bob")
	req := validateV3(3, router.DisagreeReturnAll)
	req.Consensus.SessionPool = []router.SessionID{1, 2, 3}
	if _, err := e.ValidateV3(alice, req); err != nil {
		t.Fatal(err)
	}
	keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}, {Session: 5}}
	load := func() []reputation.Record {
		t.Helper()
		recs, err := store.Load(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	before := load()
	if err := e.Feedback(bob, trace, false); !errors.Is(err, router.ErrUnknownCall) {
		t.Errorf("Bob's report on Alice's call: %v, want ErrUnknownCall", err)
	}
	if diff := cmp.Diff(before, load()); diff != "" {
		t.Fatalf("Bob's report on Alice's call moved the records (-before +after):\n%s", diff)
	}

	one := validateV3(1, router.DisagreeBestEffort)
	one.Consensus.SessionPool = []router.SessionID{5}
	resp, err := e.ValidateV3(bob, one)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Verdict == "" {
		t.Fatalf("Bob's call has no verdict: %+v", resp)
	}
	if err := e.Feedback(bob, trace, false); err != nil {
		t.Fatalf("Bob's report on his own call: %v", err)
	}
	want := before
	want[3].Wrong += reputation.DefaultFeedbackWeight
	if diff := cmp.Diff(want, load()); diff != "" {
		t.Errorf("Bob's report on his call (-want +got):\n%s", diff)
	}
	if err := e.Feedback(alice, trace, true); err != nil {
		t.Fatalf("Alice's report after Bob reused her trace id: %v", err)
	}
	got := load()
	for i := range 3 {
		if got[i] == want[i] {
			t.Errorf("session %d ran in Alice's call, and her report left its record %+v", keys[i].Session, got[i])
		}
	}
	if got[3] != want[3] {
		t.Errorf("session 5 ran in Bob's call only, and Alice's report moved it from %+v to %+v", want[3], got[3])
	}
}
