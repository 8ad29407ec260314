package consensus_test

import (
	"errors"
	"math"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// FuzzWeighted checks that weighted aggregation of any votes, under any
// policy, reliabilities and confidence slopes, never panics, states a confidence in [0, 1]
// and an agreement that follows from its counts, and that an outcome
// Decided reports settled (the running replicas weighed as their
// sessions) keeps its winner once the pending votes arrive.
func FuzzWeighted(f *testing.F) {
	f.Add([]byte{0, 0, 1}, []byte{200, 100, 250}, uint8(0), uint8(0), uint8(0))
	f.Add([]byte{0, 1, 1, 0, 7}, []byte{255, 130, 140, 90, 10}, uint8(0x06), uint8(1), uint8(50))
	f.Add([]byte{4, 14, 24, 34, 6}, []byte{1, 2, 3}, uint8(0x18), uint8(4), uint8(200))
	f.Add([]byte{210, 211}, []byte{204, 204}, uint8(0x02), uint8(0x84), uint8(0))
	f.Fuzz(func(t *testing.T, data, rels []byte, pendingMask, mode, rho uint8) {
		policies := []consensus.DisagreementPolicy{consensus.BestEffort, consensus.ReturnAll, consensus.FailHard}
		failures := []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative}
		p := consensus.Policy{Disagreement: policies[int(mode)%3], Failures: failures[int(mode)/3%2]}
		full, partial := fuzzVotes(data, pendingMask)
		r := consensus.Reliabilities{Sessions: map[int64]float64{}, Correlation: float64(rho) / 256}
		launched := make([]int64, len(full))
		for i := range full {
			launched[i] = full[i].Session
			if i < len(rels) {
				r.Sessions[full[i].Session] = float64(rels[i]) / 255
			}
		}
		if mode&0x80 != 0 { // confidence moves each vote's weight
			r.Confidence = map[int64]consensus.ConfidenceSlope{}
			for i := range full {
				r.Confidence[full[i].Session] = consensus.ConfidenceSlope{Slope: 1}
				full[i].Confidence = float64(data[i]) / 255
				if partial[i].Label != "" {
					partial[i].Confidence = full[i].Confidence
				}
			}
		}
		w := consensus.Weighted{Reliabilities: r, Launched: launched}
		out, err := w.Aggregate(full, p)
		if errors.Is(err, consensus.ErrInvalid) {
			return // no votes, or an empty label
		}
		if !(out.Confidence >= 0 && out.Confidence <= 1) || out.Agreement < 0 || out.Agreement > 1 {
			t.Fatalf("confidence %v, agreement %v out of range", out.Confidence, out.Agreement)
		}
		if out.Winner >= 0 {
			if want := float64(out.Agreeing) / float64(out.Agreeing+out.Against); math.Abs(out.Agreement-want) > 1e-12 {
				t.Fatalf("agreement %v != %d/(%d+%d)", out.Agreement, out.Agreeing, out.Agreeing, out.Against)
			}
		} else if out.Confidence != 0 {
			t.Fatalf("confidence %v without a winner", out.Confidence)
		}
		if !w.Decided(full, p) {
			t.Fatal("every vote is in, yet not decided")
		}
		if p.Disagreement == consensus.FailHard || !w.Decided(partial, p) {
			return
		}
		cut := append([]consensus.Vote(nil), partial...)
		for i := range cut {
			if cut[i].Label == "" {
				cut[i] = consensus.Vote{Session: launched[i], Label: cancelled}
			}
		}
		early, _ := w.Aggregate(cut, p)
		ek, _ := consensus.DefaultKey(early.Answer)
		wk, _ := consensus.DefaultKey(out.Answer)
		if (early.Winner < 0) != (out.Winner < 0) || out.Winner >= 0 && (early.Label != out.Label || ek != wk) {
			t.Fatalf("decided early on %s (winner %d), but all votes give %s (winner %d)", early.Label, early.Winner, out.Label, out.Winner)
		}
	})
}
