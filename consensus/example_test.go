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
	_, err := consensus.For(consensus.StrategyModelEnsemble)
	fmt.Println(err, errors.Is(err, consensus.ErrNotAvailable))
	// Output:
	// consensus: strategy not available: "model_ensemble" true
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

func ExamplePosterior() {
	// The confidence of a tally is a function of its two counts: votes for
	// the winner, and votes against it.
	for _, t := range [][2]int{{1, 0}, {2, 0}, {2, 1}, {3, 1}, {4, 1}, {5, 0}} {
		fmt.Printf("%d–%d: %.4f\n", t[0], t[1], consensus.Posterior(t[0], t[1]))
	}
	// Output:
	// 1–0: 0.7500
	// 2–0: 0.8750
	// 2–1: 0.6875
	// 3–1: 0.8125
	// 4–1: 0.8906
	// 5–0: 0.9844
}

func ExampleStop() {
	// A sequential call: launch the runs Stop asks for, pool every vote,
	// and ask again, until it says 0. Here the first two runs split, the
	// next two back VALID, and 3 of 4 settles the call.
	answers := []consensus.Label{consensus.LabelValid, consensus.LabelInvalid, consensus.LabelValid, consensus.LabelValid, consensus.LabelInvalid}
	var stop consensus.Stop
	var votes []consensus.Vote
	out := consensus.Outcome{}
	for k := stop.Next(out); k > 0; k = stop.Next(out) {
		fmt.Println("launch", k)
		for range k {
			votes = append(votes, consensus.Vote{Label: answers[len(votes)]})
		}
		out, _ = consensus.Majority{}.Aggregate(votes, consensus.Policy{})
	}
	fmt.Println(out.Label, out.Verdicts, stop.Accept(out), out.Confidence)
	// Output:
	// launch 2
	// launch 2
	// VALID [VALID INVALID VALID VALID] true 0.8125
}

// A vote counts with its session's record moved by the confidence it
// reported, under its session's slope: a session right 80% of the time
// whose confidence says something (a slope of 0.5 about its mean
// log-odds of 1.4) weighs a confident vote more than an unsure one, never
// beyond 30% of its record's weight either way.
func ExampleReliabilities_Evidence() {
	rel := consensus.Reliabilities{
		Sessions:   map[int64]float64{1: 0.8},
		Confidence: map[int64]consensus.ConfidenceSlope{1: {Slope: 0.5, Center: 1.4}},
	}
	fmt.Printf("record alone:  %.3f\n", consensus.Weight(rel.Of(1)))
	for _, c := range []float64{0.6, 0.8, 0.9, 0.99} {
		fmt.Printf("confidence %.2f: %.3f\n", c, rel.Evidence(consensus.Vote{Session: 1, Label: consensus.LabelValid, Confidence: c}))
	}
	// Output:
	// record alone:  1.386
	// confidence 0.60: 0.970
	// confidence 0.80: 1.379
	// confidence 0.90: 1.785
	// confidence 0.99: 1.802
}
