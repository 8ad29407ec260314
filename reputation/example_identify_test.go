package reputation_test

import (
	"context"
	"fmt"

	"github.com/vouchkit/vouch/reputation"
)

// A server names the model behind each session as it starts. Session 3
// led on llama3.2's outcomes; the panel file now puts gemma2 behind it,
// and the book forgets it in every scope.
func ExampleBook_Identify() {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		panic(err)
	}
	scope := reputation.Scope{Operation: "validate_v3", Kind: "classification"}
	changed, err := book.Identify(ctx, 3, "llama3.2:3b at localhost:11434")
	if err != nil {
		panic(err)
	}
	fmt.Println("first start, changed:", changed)
	// Four reported calls on which session 3 alone opposed a wrong outcome.
	won := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3, Opposed: true}}
	for range 4 {
		if err := book.Feedback(ctx, scope, won, false); err != nil {
			panic(err)
		}
	}
	for _, model := range []string{"llama3.2:3b", "gemma2:2b"} {
		changed, err := book.Identify(ctx, 3, model+" at localhost:11434")
		if err != nil {
			panic(err)
		}
		rel, err := book.Reliabilities(ctx, scope, []int64{3})
		if err != nil {
			panic(err)
		}
		_, leads, err := book.Leader(ctx, scope, []int64{1, 2, 3})
		if err != nil {
			panic(err)
		}
		fmt.Printf("restart with %s, changed: %v; session 3 reads %.3f, leads: %v\n", model, changed, rel.Sessions[3], leads)
	}
	// Output:
	// first start, changed: false
	// restart with llama3.2:3b, changed: false; session 3 reads 0.857, leads: true
	// restart with gemma2:2b, changed: true; session 3 reads 0.800, leads: false
}
