package reputation_test

import (
	"context"
	"fmt"

	"github.com/vouchkit/vouch/reputation"
)

// A host learns that session 3 now runs another model: what its reports
// taught goes, and the session reads as one never seen.
func ExampleBook_Forget() {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		panic(err)
	}
	scope := reputation.Scope{Operation: "validate_v3", Kind: "classification"}
	// Four reported calls on which session 3 alone opposed a wrong outcome.
	won := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3, Opposed: true}}
	for range 4 {
		if err := book.Feedback(ctx, scope, won, false); err != nil {
			panic(err)
		}
	}
	show := func(when string) {
		rel, err := book.Reliabilities(ctx, scope, []int64{3})
		if err != nil {
			panic(err)
		}
		l, leads, err := book.Leader(ctx, scope, []int64{1, 2, 3})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: session 3 reads %.3f; leader %v (session %d)\n", when, rel.Sessions[3], leads, l.Session)
	}
	show("before")
	if err := book.Forget(ctx, scope, 3); err != nil {
		panic(err)
	}
	show("after")
	// Output:
	// before: session 3 reads 0.857; leader true (session 3)
	// after: session 3 reads 0.800; leader false (session 0)
}
