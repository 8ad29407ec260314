package reputation_test

import (
	"context"
	"fmt"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// A book learns from the calls its sessions vote in: session 3 keeps
// dissenting from sessions 1 and 2, and after twenty calls its vote
// weighs less than theirs. A host's report that a call was wrong then
// lowers the sessions that backed it.
func ExampleBook() {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{}) // in memory
	if err != nil {
		panic(err)
	}
	scope := reputation.Scope{Operation: "validate"}
	votes := []consensus.Vote{
		{Session: 1, Label: consensus.LabelValid},
		{Session: 2, Label: consensus.LabelValid},
		{Session: 3, Label: consensus.LabelInvalid},
	}
	for range 20 {
		rel, err := book.Reliabilities(ctx, scope, []int64{1, 2, 3})
		if err != nil {
			panic(err)
		}
		if err := book.Learn(ctx, scope, votes, consensus.Policy{}, rel); err != nil {
			panic(err)
		}
	}
	rel, _ := book.Reliabilities(ctx, scope, []int64{1, 2, 3, 4})
	fmt.Printf("1: %.2f  3: %.2f  4 (never seen): %.2f\n", rel.Sessions[1], rel.Sessions[3], rel.Sessions[4])
	out, _ := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
	fmt.Printf("%s, confidence %.3f\n", out.Label, out.Confidence)

	ballots := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3}}
	if err := book.Feedback(ctx, scope, ballots, false); err != nil {
		panic(err)
	}
	rel, _ = book.Reliabilities(ctx, scope, []int64{1})
	fmt.Printf("1 after a wrong outcome: %.2f\n", rel.Sessions[1])
	// Output:
	// 1: 0.93  3: 0.19  4 (never seen): 0.80
	// VALID, confidence 0.995
	// 1 after a wrong outcome: 0.80
}

// A ledger remembers each call by its caller and id, and counts a report
// on it once: another caller's report finds nothing, a repeated report
// adds nothing, and the opposite report replaces the first.
func ExampleLedger_Report() {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		panic(err)
	}
	calls := reputation.NewLedger(1000)
	scope := reputation.Scope{Operation: "validate"}
	calls.Put("alice", "trace-1", scope, []reputation.Ballot{{Session: 1, Backed: true}})
	show := func(what string) {
		_, counts, err := book.Evidence(ctx, scope, []int64{1})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-20s right %.0f, wrong %.0f\n", what, counts[1].Right, counts[1].Wrong)
	}
	show("before:")
	ok, _ := calls.Report(ctx, book, "bob", "trace-1", false)
	fmt.Println("bob's report found a call:", ok)
	calls.Report(ctx, book, "alice", "trace-1", false)
	calls.Report(ctx, book, "alice", "trace-1", false)
	show("wrong, twice:")
	calls.Report(ctx, book, "alice", "trace-1", true)
	show("right instead:")
	// Output:
	// before:              right 4, wrong 1
	// bob's report found a call: false
	// wrong, twice:        right 4, wrong 5
	// right instead:       right 8, wrong 1
}
