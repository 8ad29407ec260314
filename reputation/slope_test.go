package reputation_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// simulateConfident runs calls of binary claims on three sessions, each
// right with the probability its confidence of that vote draws: session 1
// states that probability (its confidence says what its vote is worth),
// session 2 states a constant 0.5 (MMLU-Pro's sessions), session 3 a
// confidence drawn apart from its rightness. One call in ten has its
// outcome reported through a Ledger.
func simulateConfident(t *testing.T, b *reputation.Book, calls int) {
	t.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(3, 4))
	ledger := reputation.NewLedger(10)
	for c := range calls {
		valid := r.Float64() < 0.5
		votes := make([]consensus.Vote, 3)
		for j := range votes {
			p := 0.55 + 0.44*r.Float64() // the probability this vote is right
			conf := p
			switch j {
			case 1:
				conf = 0.5
			case 2:
				conf = 0.55 + 0.44*r.Float64()
			}
			v := valid
			if r.Float64() >= p {
				v = !v
			}
			votes[j] = consensus.Vote{Session: int64(j + 1), Label: consensus.LabelInvalid, Confidence: conf}
			if v {
				votes[j].Label = consensus.LabelValid
			}
		}
		rel := reliabilities(t, b, 1, 2, 3)
		if err := b.Learn(ctx, scope, votes, consensus.Policy{}, rel); err != nil {
			t.Fatal(err)
		}
		if c%10 != 0 {
			continue
		}
		out, err := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		var ballots []reputation.Ballot
		for _, v := range votes {
			ballots = append(ballots, reputation.Ballot{Session: v.Session, Backed: v.Label == out.Label, Confidence: v.Confidence})
		}
		id := fmt.Sprint("c", c)
		ledger.PutCall("", id, reputation.Call{Scope: scope, Ballots: ballots})
		if _, err := ledger.Report(ctx, b, "", id, (out.Label == consensus.LabelValid) == valid); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBook_confidenceSlope: from agreement and reported outcomes, a
// session whose confidence tells its right votes from its wrong ones
// learns a positive slope centred near its mean log-odds; one that
// reports a constant confidence, or a confidence apart from being right,
// learns none (or next to none) and weighs its record alone.
func TestBook_confidenceSlope(t *testing.T) {
	b := newBook(t, nil)
	simulateConfident(t, b, 3000)
	rel := reliabilities(t, b, 1, 2, 3)
	informed := rel.Confidence[1]
	if !(informed.Slope > 0.3) {
		t.Errorf("session 1, whose confidence is the chance its vote is right: slope %v, want above 0.3", informed.Slope)
	}
	if !(informed.Center > 0.5 && informed.Center < 2.5) {
		t.Errorf("session 1's centre %v, want its mean log-odds, in (0.5, 2.5)", informed.Center)
	}
	if cs, ok := rel.Confidence[2]; ok {
		t.Errorf("session 2 reports a constant confidence, yet reads slope %+v", cs)
	}
	if cs := rel.Confidence[3]; cs.Slope > informed.Slope/3 {
		t.Errorf("session 3, whose confidence says nothing: slope %v, want under a third of session 1's %v", cs.Slope, informed.Slope)
	}
	if testing.Verbose() {
		t.Logf("slopes: %+v; reliabilities %v", rel.Confidence, rel.Sessions)
	}
}

// TestBook_confidenceSlope_uninformative: a session whose every vote
// states the same confidence reads its record alone: each vote's
// evidence is the Weight of its reliability, whatever it learned.
func TestBook_confidenceSlope_uninformative(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(7, 8))
	for _, conf := range []float64{0, 0.5, 0.9} {
		b := newBook(t, nil)
		for range 500 {
			votes := []consensus.Vote{
				{Session: 1, Label: consensus.LabelValid, Confidence: conf},
				{Session: 2, Label: consensus.LabelValid, Confidence: conf},
			}
			if r.Float64() < 0.3 {
				votes[1].Label = consensus.LabelInvalid
			}
			rel := reliabilities(t, b, 1, 2)
			if err := b.Learn(ctx, scope, votes, consensus.Policy{}, rel); err != nil {
				t.Fatal(err)
			}
		}
		rel := reliabilities(t, b, 1, 2)
		for _, s := range []int64{1, 2} {
			v := consensus.Vote{Session: s, Label: consensus.LabelValid, Confidence: conf}
			if got, want := rel.Evidence(v), consensus.Weight(rel.Of(s)); got != want {
				t.Errorf("confidence %v: session %d's vote weighs %v, its record %v", conf, s, got, want)
			}
		}
	}
}
