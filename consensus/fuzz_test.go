package consensus_test

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// fuzzVotes decodes data into votes: each byte picks a label and an answer.
// Bit i of pendingMask leaves vote i pending in the partial copy.
func fuzzVotes(data []byte, pendingMask uint8) (full, partial []consensus.Vote) {
	labels := []consensus.Label{valid, invalid, consensus.LabelTrue, consensus.LabelFalse, ok, "RETRY", timeout, errLabel, cancelled, ""}
	answers := []any{nil, "x", " x\t ", "y", json.RawMessage(`{"b":[1,"p  q"],"a":null}`), map[string]any{"a": nil, "b": []any{1.0, "p q"}}, 1}
	if len(data) > 7 {
		data = data[:7]
	}
	for i, b := range data {
		v := consensus.Vote{Session: int64(i), Label: labels[int(b)%len(labels)], Answer: answers[int(b)/len(labels)%len(answers)]}
		full = append(full, v)
		if pendingMask&(1<<i) != 0 {
			v = consensus.Vote{}
		}
		partial = append(partial, v)
	}
	return full, partial
}

// FuzzMajority checks that aggregating any votes under any policy never
// panics and keeps the Outcome's invariants, and that an outcome Decided
// reports settled keeps its winner once the pending votes arrive.
func FuzzMajority(f *testing.F) {
	f.Add([]byte{0, 0, 1}, uint8(0), uint8(0))
	f.Add([]byte{6, 7, 0}, uint8(4), uint8(3))
	f.Add([]byte{4, 14, 24, 34, 6}, uint8(0x18), uint8(1))
	f.Add([]byte{1, 0, 0, 1, 8}, uint8(2), uint8(5))
	f.Fuzz(func(t *testing.T, data []byte, pendingMask, mode uint8) {
		policies := []consensus.DisagreementPolicy{consensus.BestEffort, consensus.ReturnAll, consensus.FailHard}
		failures := []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative}
		p := consensus.Policy{Disagreement: policies[int(mode)%3], Failures: failures[int(mode)/3%2]}
		full, partial := fuzzVotes(data, pendingMask)

		out, err := consensus.Majority{}.Aggregate(full, p)
		if errors.Is(err, consensus.ErrInvalid) {
			empty := len(full) == 0
			for _, v := range full {
				empty = empty || v.Label == ""
			}
			if !empty {
				t.Fatalf("ErrInvalid for valid votes: %v", err)
			}
			return
		}
		checkOutcome(t, full, p, out, err)

		if !(consensus.Majority{}).Decided(full, p) {
			t.Fatal("every vote is in, yet not decided")
		}
		if !(consensus.Majority{}).Decided(partial, p) {
			return
		}
		// The Runner records the pending votes as CANCELLED.
		cut := append([]consensus.Vote(nil), partial...)
		for i := range cut {
			if cut[i].Label == "" {
				cut[i].Label = cancelled
			}
		}
		early, earlyErr := consensus.Majority{}.Aggregate(cut, p)
		if p.Disagreement == consensus.FailHard && (err != nil || earlyErr != nil) {
			if !errors.Is(earlyErr, consensus.ErrDisagreement) && !errors.Is(earlyErr, consensus.ErrAllFailed) || !errors.Is(err, errors.Unwrap(earlyErr)) {
				t.Fatalf("decided early with error %v, but all votes give %v", earlyErr, err)
			}
			return
		}
		if (early.Winner < 0) != (out.Winner < 0) || early.Label != out.Label && out.Winner >= 0 {
			t.Fatalf("decided early on %s (winner %d), but all votes give %s (winner %d)", early.Label, early.Winner, out.Label, out.Winner)
		}
	})
}

func checkOutcome(t *testing.T, votes []consensus.Vote, p consensus.Policy, out consensus.Outcome, err error) {
	t.Helper()
	n := len(votes)
	if out.Replicas != n || len(out.Verdicts) != n || len(out.Votes) != n {
		t.Fatalf("Replicas %d, %d verdicts, %d votes; want %d each", out.Replicas, len(out.Verdicts), len(out.Votes), n)
	}
	if out.Agreement < 0 || out.Agreement > 1 || out.Confidence < 0 || out.Confidence >= 1 {
		t.Fatalf("Agreement %v, Confidence %v out of range", out.Agreement, out.Confidence)
	}
	if out.Winner >= 0 {
		if want := float64(out.Agreeing) / float64(out.Agreeing+out.Against); math.Abs(out.Agreement-want) > 1e-12 {
			t.Fatalf("Agreement %v != %d/(%d+%d)", out.Agreement, out.Agreeing, out.Agreeing, out.Against)
		}
		if out.Confidence != consensus.Posterior(out.Agreeing, out.Against) {
			t.Fatalf("Confidence %v != Posterior(%d, %d)", out.Confidence, out.Agreeing, out.Against)
		}
	}
	if out.Answered+out.Failed+out.Cancelled != n {
		t.Fatalf("Answered %d + Failed %d + Cancelled %d != %d", out.Answered, out.Failed, out.Cancelled, n)
	}
	keys := make([]string, n)
	cast := 0
	for i, v := range votes {
		if out.Verdicts[i] != v.Label {
			t.Fatalf("verdict %d = %s, want %s", i, out.Verdicts[i], v.Label)
		}
		k, kerr := consensus.DefaultKey(v.Answer)
		if kerr != nil {
			t.Fatal(kerr)
		}
		keys[i] = string(v.Label) + "\x00" + k
		if v.Label != cancelled && !v.Label.Failed() {
			cast++
		}
	}
	if out.Winner < 0 {
		if out.Agreeing != 0 || out.Answer != nil || out.Confidence != 0 || !out.LowConfidence {
			t.Fatalf("no winner, yet %+v", out)
		}
		if out.Label != cancelled && !out.Label.Failed() {
			t.Fatalf("no winner, yet Label %s is a vote", out.Label)
		}
	} else {
		w := votes[out.Winner]
		if w.Label != out.Label || w.Label == cancelled || w.Label.Failed() {
			t.Fatalf("winner %d has label %s, outcome %s", out.Winner, w.Label, out.Label)
		}
		size := map[string]int{}
		for i, k := range keys {
			if votes[i].Label != cancelled && !votes[i].Label.Failed() {
				size[k]++
				if k == keys[out.Winner] && i < out.Winner {
					t.Fatalf("winner %d is not its group's first vote (%d)", out.Winner, i)
				}
			}
		}
		against := cast - out.Agreeing
		if p.Failures == consensus.FailuresNegative {
			against += n - cast - countLabel(votes, cancelled)
		}
		if out.Against != against {
			t.Fatalf("Against %d, want %d", out.Against, against)
		}
		if size[keys[out.Winner]] != out.Agreeing {
			t.Fatalf("winning group has %d votes, Agreeing %d", size[keys[out.Winner]], out.Agreeing)
		}
		for k, s := range size {
			if s > out.Agreeing {
				t.Fatalf("group %q has %d votes, more than the winner's %d", k, s, out.Agreeing)
			}
		}
		if out.Disagreement != (cast > out.Agreeing || p.Failures == consensus.FailuresNegative && n-cast > countLabel(votes, cancelled)) {
			t.Fatalf("Disagreement %t for %d cast votes, %d agreeing", out.Disagreement, cast, out.Agreeing)
		}
	}
	wantErr := p.Disagreement == consensus.FailHard && (cast == 0 || out.Disagreement)
	if (err != nil) != wantErr {
		t.Fatalf("err = %v under %s with %d cast, disagreement %t", err, p.Disagreement, cast, out.Disagreement)
	}
}

func countLabel(vs []consensus.Vote, l consensus.Label) int {
	c := 0
	for _, v := range vs {
		if v.Label == l {
			c++
		}
	}
	return c
}
