package consensus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/vouchkit/vouch/consensus"
)

func ExampleMajority_Aggregate() {
	votes := []consensus.Vote{
		{Session: 201, Label: consensus.LabelValid},
		{Session: 202, Label: consensus.LabelValid},
		{Session: 203, Label: consensus.LabelInvalid},
	}
	out, err := consensus.Majority{}.Aggregate(votes, consensus.Policy{Disagreement: consensus.BestEffort})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s, agreement %.2f, confidence %.2f, low confidence %t\n",
		out.Label, out.Agreement, out.Confidence, out.LowConfidence)
	fmt.Println(out.Verdicts)
	// Output:
	// VALID, agreement 0.67, confidence 0.69, low confidence true
	// [VALID VALID INVALID]
}

func ExampleMajority_Aggregate_failHard() {
	votes := []consensus.Vote{
		{Session: 201, Label: consensus.LabelValid},
		{Session: 202, Label: consensus.LabelInvalid, Reason: "cites a source that does not exist"},
		{Session: 203, Label: consensus.LabelValid},
	}
	_, err := consensus.Majority{}.Aggregate(votes, consensus.Policy{Disagreement: consensus.FailHard})
	var oe *consensus.OutcomeError
	if errors.As(err, &oe) && errors.Is(err, consensus.ErrDisagreement) {
		fmt.Println(err)
		fmt.Println("dissent from session", oe.Outcome.Votes[1].Session, "-", oe.Outcome.Votes[1].Reason)
	}
	// Output:
	// consensus: replicas disagree (verdicts VALID INVALID VALID)
	// dissent from session 202 - cites a source that does not exist
}

func ExampleMajority_Aggregate_timeouts() {
	votes := []consensus.Vote{
		{Label: consensus.LabelValid},
		{Label: consensus.LabelTimeout},
		{Label: consensus.LabelTimeout},
	}
	for _, fm := range []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative} {
		out, _ := consensus.Majority{}.Aggregate(votes, consensus.Policy{Failures: fm})
		fmt.Printf("%s: %s, winner %d\n", fm, out.Label, out.Winner)
	}
	// Output:
	// non_votes: VALID, winner 0
	// negative_evidence: TIMEOUT, winner -1
}

func ExampleDefaultKey() {
	a, _ := consensus.DefaultKey(json.RawMessage(`{"city": "Paris", "note": " capital  of France "}`))
	b, _ := consensus.DefaultKey(map[string]string{"note": "capital of\nFrance", "city": "Paris"})
	fmt.Println(a)
	fmt.Println(a == b)
	// Output:
	// {"city":"Paris","note":"capital of France"}
	// true
}

func ExampleFor() {
	_, err := consensus.For(consensus.StrategyWeighted)
	fmt.Println(err, errors.Is(err, consensus.ErrNotAvailable))
	// Output:
	// consensus: strategy not available: "weighted" true
}

// Three replicas answer VALID at once; the other two would take an hour.
// Three of five decide the majority, so Run cancels the two with cause
// ErrDecided and returns without waiting for the hour.
func ExampleRunner() {
	r := consensus.Runner{Timeout: 2 * time.Hour}
	out, err := r.Run(context.Background(), 5, func(ctx context.Context, replica int) consensus.Vote {
		if replica < 3 {
			return consensus.Vote{Label: consensus.LabelValid}
		}
		select {
		case <-time.After(time.Hour):
			return consensus.Vote{Label: consensus.LabelInvalid}
		case <-ctx.Done():
			return consensus.Vote{Label: consensus.LabelError, Reason: context.Cause(ctx).Error()}
		}
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(out.Label, out.Verdicts, out.Agreement)
	fmt.Println(out.Votes[4].Reason)
	// Output:
	// VALID [VALID VALID VALID CANCELLED CANCELLED] 1
	// consensus: outcome already decided
}
