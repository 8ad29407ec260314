package reputation_test

import (
	"context"
	"fmt"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// A book learns reliabilities from reported outcomes, not from
// agreement: sessions 1 and 2 vote alike and session 3 keeps dissenting,
// and after twenty such calls all three still weigh alike, so the
// majority stands. Five reports that the majority's answer was wrong
// then lower the sessions that backed it, and session 3's vote decides.
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
	show := func(when string) {
		rel, err := book.Reliabilities(ctx, scope, []int64{1, 2, 3})
		if err != nil {
			panic(err)
		}
		out, _ := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
		fmt.Printf("%-23s 1: %.2f  3: %.2f  %s\n", when, rel.Sessions[1], rel.Sessions[3], out.Label)
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
	show("after 20 calls:")
	ballots := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3}}
	for range 5 {
		if err := book.Feedback(ctx, scope, ballots, false); err != nil {
			panic(err)
		}
	}
	show("after 5 wrong outcomes:")
	// Output:
	// after 20 calls:         1: 0.80  3: 0.80  VALID
	// after 5 wrong outcomes: 1: 0.53  3: 0.80  INVALID
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
	// before:              right 32, wrong 8
	// bob's report found a call: false
	// wrong, twice:        right 32, wrong 12
	// right instead:       right 36, wrong 8
}

// A call reads what it needs of its scope in one store read: here the
// leader among three sessions, after session 3 dissented rightly from
// the two others four times, and the calibration maps of two tiers.
func ExampleBook_Snapshot() {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		panic(err)
	}
	scope := reputation.Scope{Operation: "validate", Kind: "fact"}
	dissent := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3, Opposed: true}}
	for range 4 {
		if err := book.Feedback(ctx, scope, dissent, false); err != nil { // the majority was wrong
			panic(err)
		}
	}
	snap, err := book.Snapshot(ctx, scope, reputation.SnapshotRequest{
		Leader: []int64{1, 2, 3},
		Tiers:  []string{"adaptive/VALID", "adaptive/INVALID"},
	})
	if err != nil {
		panic(err)
	}
	fmt.Printf("leader %d (won %.0f, lost %.0f, p %.4f); %d maps, %.0f outcomes in the first\n",
		snap.Lead.Session, snap.Lead.Won, snap.Lead.Lost, snap.Lead.PValue(), len(snap.Calibrations), snap.Calibrations[0].Total())
	// Output:
	// leader 3 (won 4, lost 0, p 0.0625); 2 maps, 0 outcomes in the first
}
