package router_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// errStoreDown is the error of a reputation store out of reach.
var errStoreDown = errors.New("connection refused")

// downStore is a reputation store that fails every read and write once
// down is set, as a database that went away does.
type downStore struct {
	reputation.Memory
	down atomic.Bool
}

func (s *downStore) Load(ctx context.Context, keys []reputation.Key) ([]reputation.Record, error) {
	if s.down.Load() {
		return nil, errStoreDown
	}
	return s.Memory.Load(ctx, keys)
}

func (s *downStore) Add(ctx context.Context, horizon float64, deltas []reputation.Delta) error {
	if s.down.Load() {
		return errStoreDown
	}
	return s.Memory.Add(ctx, horizon, deltas)
}

func (s *downStore) AddIf(ctx context.Context, horizon float64, cond reputation.Key, want reputation.Record, deltas []reputation.Delta) (bool, error) {
	if s.down.Load() {
		return false, errStoreDown
	}
	return s.Memory.AddIf(ctx, horizon, cond, want, deltas)
}

// TestClient_Feedback_storeDown: a report over POST /api/v3/feedback
// while the engine's reputation store is out of reach is answered 503
// unavailable, which a client sends again, as every store out of reach
// is, not 500 internal; in process, Engine.Feedback's error is the same
// *Error wrapping the store's. Once the store is back, the same report is
// accepted.
func TestClient_Feedback_storeDown(t *testing.T) {
	store := new(downStore)
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := offEngine(t, router.WithReputation(book))
	_, alice, _ := feedbackServer(t, e)
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx := router.WithTraceID(context.Background(), trace)
	req := validateV3(3, router.DisagreeReturnAll)
	req.Consensus.SessionPool = []router.SessionID{1, 2, 3}
	if _, err := alice.ValidateV3(ctx, req); err != nil {
		t.Fatal(err)
	}

	store.down.Store(true)
	type answer struct {
		Status     int
		Code       problem.Code
		WrapsStore bool
	}
	answerOf := func(err error) answer {
		var p *router.Error
		if !errors.As(err, &p) {
			t.Fatalf("error = %v (%T), want a *router.Error", err, err)
		}
		return answer{p.Status, p.Code, errors.Is(err, errStoreDown)}
	}
	want := answer{http.StatusServiceUnavailable, problem.CodeUnavailable, false}
	if diff := cmp.Diff(want, answerOf(alice.Feedback(ctx, trace, false))); diff != "" {
		t.Errorf("report over HTTP with the store down (-want +got):\n%s", diff)
	}
	want.WrapsStore = true
	if diff := cmp.Diff(want, answerOf(e.Feedback(router.WithCaller(ctx, "alice"), trace, false))); diff != "" {
		t.Errorf("Engine.Feedback with the store down (-want +got):\n%s", diff)
	}

	store.down.Store(false)
	if err := alice.Feedback(ctx, trace, false); err != nil {
		t.Errorf("the report again, the store back: %v", err)
	}
}
