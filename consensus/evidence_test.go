package consensus_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// TestReliabilitiesEvidence holds a vote's evidence: its session's
// record, moved by β·(logit c − centre), within ConfidenceSpan of the
// record and at most Weight(MaxReliability).
func TestReliabilitiesEvidence(t *testing.T) {
	rel := consensus.Reliabilities{
		Sessions: map[int64]float64{1: 0.8, 2: 0.8, 3: 0.999},
		Confidence: map[int64]consensus.ConfidenceSlope{
			1: {Slope: 0.5, Center: logit(0.8)},
			3: {Slope: 1, Center: 0},
		},
	}
	w := logit(0.8)
	tests := []struct {
		name string
		vote consensus.Vote
		want float64
	}{
		{"at the centre: the record", consensus.Vote{Session: 1, Confidence: 0.8}, w},
		{"above the centre", consensus.Vote{Session: 1, Confidence: 0.85}, w + 0.5*(logit(0.85)-logit(0.8))},
		{"below the centre", consensus.Vote{Session: 1, Confidence: 0.7}, w + 0.5*(logit(0.7)-logit(0.8))},
		{"far above: capped at the span", consensus.Vote{Session: 1, Confidence: 0.999}, (1 + consensus.ConfidenceSpan) * w},
		{"far below: floored at the span", consensus.Vote{Session: 1, Confidence: 0.05}, (1 - consensus.ConfidenceSpan) * w},
		{"no confidence reported: the record", consensus.Vote{Session: 1}, w},
		{"a session with no slope: the record", consensus.Vote{Session: 2, Confidence: 0.99}, w},
		{"an unknown session: the prior's weight", consensus.Vote{Session: 9, Confidence: 0.99}, logit(consensus.DefaultReliability)},
		{"capped at the most a vote weighs", consensus.Vote{Session: 3, Confidence: 0.999}, consensus.Weight(consensus.MaxReliability)},
	}
	for _, tt := range tests {
		if got := rel.Evidence(tt.vote); !(math.Abs(got-tt.want) <= 1e-12) {
			t.Errorf("%s: evidence %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestWeightedConfidence: under Weighted, a vote counts with its
// Evidence; two agreeing votes of equal sessions outweigh one however
// confident, and a slope of 0 weighs as no slope at all (the
// aggregation of reputation before confidence, exactly).
func TestWeightedConfidence(t *testing.T) {
	slopes := map[int64]consensus.ConfidenceSlope{1: {Slope: 2, Center: 0}, 2: {Slope: 2, Center: 0}, 3: {Slope: 2, Center: 0}}
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.7, 2: 0.7, 3: 0.7}, Confidence: slopes}
	votes := panel("IVV")
	votes[0].Confidence, votes[1].Confidence, votes[2].Confidence = 0.999, 0.51, 0.51
	out, err := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Label != valid {
		t.Errorf("one confident INVALID against two unsure VALIDs of equal sessions: %s won", out.Label)
	}
	for i, v := range votes {
		if got := rel.Evidence(v); out.Weights[i] != got {
			t.Errorf("vote %d weighs %v, its evidence is %v", i, out.Weights[i], got)
		}
	}
	// A confident INVALID turns a 1–1 split of equal sessions.
	split := panel("IV")
	split[0].Confidence, split[1].Confidence = 0.99, 0.51
	if out, err = (consensus.Weighted{Reliabilities: rel}).Aggregate(split, consensus.Policy{}); err != nil || out.Label != invalid {
		t.Errorf("a confident INVALID against an unsure VALID: %s (%v), want INVALID", out.Label, err)
	}

	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		n := 1 + r.IntN(5)
		votes := make([]consensus.Vote, n)
		plain := consensus.Reliabilities{Sessions: map[int64]float64{}, Correlation: r.Float64() * 0.9}
		for i := range votes {
			votes[i] = consensus.Vote{Session: int64(i + 1), Label: []consensus.Label{valid, invalid}[r.IntN(2)], Confidence: r.Float64()}
			plain.Sessions[int64(i+1)] = 0.5 + r.Float64()/2
		}
		zero := plain
		zero.Confidence = map[int64]consensus.ConfidenceSlope{}
		for i := range votes {
			zero.Confidence[int64(i+1)] = consensus.ConfidenceSlope{Center: r.NormFloat64()}
		}
		a, err := consensus.Weighted{Reliabilities: plain}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := consensus.Weighted{Reliabilities: zero}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Label != b.Label || a.Confidence != b.Confidence || a.Score != b.Score {
			t.Fatalf("slopes of 0 changed the outcome: %s at %v against %s at %v", b.Label, b.Confidence, a.Label, a.Confidence)
		}
	}
	bad := consensus.Reliabilities{Confidence: map[int64]consensus.ConfidenceSlope{1: {Slope: -1}}}
	if _, err := (consensus.Weighted{Reliabilities: bad}).Aggregate(panel("V"), consensus.Policy{}); err == nil {
		t.Error("a negative slope was accepted")
	}
}

// TestWeightedDecided_confidence: a running replica whose session's
// confidence slope can raise its vote by ConfidenceSpan weighs that much
// in Decided, so that an outcome Decided settles is the one every vote
// gives.
func TestWeightedDecided_confidence(t *testing.T) {
	slope := consensus.ConfidenceSlope{Slope: 1}
	rel := consensus.Reliabilities{
		Sessions:   map[int64]float64{1: 0.8, 2: 0.8},
		Confidence: map[int64]consensus.ConfidenceSlope{1: slope, 2: slope},
	}
	w := consensus.Weighted{Reliabilities: rel, Launched: []int64{1, 2}}
	sure := consensus.Vote{Session: 1, Label: valid, Confidence: 0.999} // weighs 1.3·w
	if w.Decided([]consensus.Vote{sure, {}}, consensus.Policy{}) {
		all := []consensus.Vote{sure, {Session: 2, Label: invalid, Confidence: 0.999}}
		out, err := w.Aggregate(all, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		t.Errorf("decided on VALID, but a sure INVALID of session 2 gives %s", out.Label)
	}
	// Without a slope, session 2 weighs its record alone: VALID is decided.
	plain := w
	plain.Reliabilities.Confidence = map[int64]consensus.ConfidenceSlope{1: slope}
	if !plain.Decided([]consensus.Vote{sure, {}}, consensus.Policy{}) {
		t.Error("not decided, though session 2, of no slope, weighs less than the sure VALID")
	}
}
