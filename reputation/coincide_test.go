package reputation_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// TestBook_Coincidence learns how often wrong answers coincide from the
// answers outside each call's largest group, and from nothing else.
func TestBook_Coincidence(t *testing.T) {
	ctx := context.Background()
	b, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	scope := reputation.Scope{Operation: "delegate_v3", Kind: "math"}
	answers := func(as ...string) []consensus.Vote {
		vs := make([]consensus.Vote, len(as))
		for i, a := range as {
			vs[i] = consensus.Vote{Session: int64(i + 1), Label: "OK", Answer: json.RawMessage(a)}
		}
		return vs
	}
	read := func() float64 {
		c, err := b.Coincidence(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	p := reputation.DefaultCoincidencePrior
	if got, want := read(), p.Mean(); got != want {
		t.Fatalf("before any call: %v, want the prior's %v", got, want)
	}
	for _, votes := range [][]consensus.Vote{
		answers(`18`, `18`),                // nothing outside the winner
		answers(`18`, `18`, `3`),           // one answer outside: no pair
		answers(`18`, `18`, `3`, `3`, `7`), // a tie for the largest group
		{{Session: 1, Label: "VALID"}, {Session: 2, Label: "INVALID"}, {Session: 3, Label: "INVALID"}, {Session: 4, Label: "VALID"}, {Session: 5, Label: "VALID"}}, // a validation
	} {
		if err := b.Learn(ctx, scope, votes, consensus.Policy{}, consensus.Reliabilities{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(); got != p.Mean() {
		t.Fatalf("calls that teach nothing moved it to %v", got)
	}
	// 18 wins 3 of 6; 3, 3 and 7 lose: three pairs, one alike.
	if err := b.Learn(ctx, scope, answers(`18`, `18`, `18`, `3`, `3`, `7`), consensus.Policy{}, consensus.Reliabilities{}); err != nil {
		t.Fatal(err)
	}
	want := (1 + p.Right) / (3 + p.Right + p.Wrong)
	if got := read(); math.Abs(got-want) > 1e-12 {
		t.Errorf("after one pair alike of three: %v, want %v", got, want)
	}
}
