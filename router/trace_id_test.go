package router_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// badTraceIDs are trace ids no traceparent can carry and no feedback
// route can name: WithTraceID documents 32 lowercase hex digits, not all
// zero.
var badTraceIDs = []string{
	"order-42",
	"4BF92F3577B34DA6A3CE929D0E0E4736",
	"4bf92f3577b34da6a3ce929d0e0e473",
	"00000000000000000000000000000000",
}

// TestEngine_badTraceID: an Engine call whose context carries a trace id
// that is no W3C trace id (WithTraceID) is refused with an error naming
// the id, and records no call under it, rather than recording one that
// a report over HTTP or a traceparent could never name.
func TestEngine_badTraceID(t *testing.T) {
	book, err := reputation.New(new(reputation.Memory), reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := offEngine(t, router.WithReputation(book))
	for _, id := range badTraceIDs {
		ctx := router.WithCaller(router.WithTraceID(context.Background(), id), "key:alice")
		req := validateV3(3, router.DisagreeReturnAll)
		req.Consensus.SessionPool = []router.SessionID{1, 2, 3}
		if _, err := e.ValidateV3(ctx, req); err == nil || !strings.Contains(err.Error(), `"`+id+`"`) {
			t.Errorf("ValidateV3 under trace id %q: %v, want an error naming it", id, err)
		}
		if _, err := e.ValidateV1(ctx, &router.ValidateV1Request{SessionID: 1, TaskRequestInput: "What is 2 * 3?", TaskResultOutput: "6"}); err == nil || !strings.Contains(err.Error(), `"`+id+`"`) {
			t.Errorf("ValidateV1 under trace id %q: %v, want an error naming it", id, err)
		}
		if err := e.Feedback(ctx, id, true); !errors.Is(err, router.ErrUnknownCall) {
			t.Errorf("a report on trace id %q: %v, want ErrUnknownCall: no call ran under it", id, err)
		}
	}
}

// TestClient_badTraceID: a Client call whose context carries a trace id
// that is no W3C trace id is refused with an error naming the id, rather
// than sent without it, under a trace id the caller never learns.
func TestClient_badTraceID(t *testing.T) {
	_, alice, _ := feedbackServer(t, offEngine(t))
	for _, id := range badTraceIDs {
		ctx := router.WithTraceID(context.Background(), id)
		req := validateV3(3, router.DisagreeReturnAll)
		req.Consensus.SessionPool = []router.SessionID{1, 2, 3}
		if _, err := alice.ValidateV3(ctx, req); err == nil || !strings.Contains(err.Error(), `"`+id+`"`) {
			t.Errorf("ValidateV3 under trace id %q: %v, want an error naming it", id, err)
		}
	}
}
