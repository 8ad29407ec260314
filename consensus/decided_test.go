package consensus_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

func TestMajority_Decided(t *testing.T) {
	hard, negative := consensus.FailHard, consensus.FailuresNegative
	tests := []struct {
		votes []consensus.Vote
		p     consensus.Policy
		want  bool
	}{
		{votes(valid, valid, valid, pending, pending), consensus.Policy{}, true},
		{votes(pending, valid, pending, valid, valid), consensus.Policy{}, true},
		{votes(valid, valid, pending, pending, pending), consensus.Policy{}, false},
		{votes(valid, valid, invalid, pending, pending), consensus.Policy{}, false},
		{votes(valid, valid, valid, invalid, pending), consensus.Policy{}, true},
		{votes(valid, valid, pending), consensus.Policy{}, true},
		{votes(valid, invalid, pending), consensus.Policy{}, false},
		{votes(valid, timeout, pending), consensus.Policy{}, false},
		{votes(pending), consensus.Policy{}, false},
		{votes(valid), consensus.Policy{}, true},
		{votes(pending, pending, pending), consensus.Policy{}, false},
		{votes(timeout, timeout, pending), consensus.Policy{}, false},
		{answers("a", "a", nil), consensus.Policy{}, true},
		{append(answers("a", " a "), consensus.Vote{}), consensus.Policy{}, true},
		{append(answers("a", "b"), consensus.Vote{}), consensus.Policy{}, false},

		// fail_hard: answers that disagree decide, agreement needs everyone;
		// a failure, even as negative evidence, waits for the answers to come.
		{votes(valid, valid, pending), consensus.Policy{Disagreement: hard}, false},
		{votes(valid, valid, valid, valid, pending), consensus.Policy{Disagreement: hard}, false},
		{votes(valid, invalid, pending, pending, pending), consensus.Policy{Disagreement: hard}, true},
		{votes(valid, invalid, pending, pending, pending), consensus.Policy{Disagreement: hard, Failures: negative}, true},
		{votes(valid, timeout, pending), consensus.Policy{Disagreement: hard}, false},
		{votes(valid, timeout, pending), consensus.Policy{Disagreement: hard, Failures: negative}, false},
		{votes(valid, timeout, valid), consensus.Policy{Disagreement: hard, Failures: negative}, true},
		{votes(valid, valid, valid), consensus.Policy{Disagreement: hard}, true},

		// Failures as negative evidence compete, and win ties.
		{votes(timeout, timeout, pending), consensus.Policy{Failures: negative}, true},
		{votes(timeout, errLabel, valid, pending, pending), consensus.Policy{Failures: negative}, false},
		{votes(valid, valid, valid, timeout, pending), consensus.Policy{Failures: negative}, true},
		{votes(valid, valid, timeout, pending, pending), consensus.Policy{Failures: negative}, false},
		{votes(valid, valid, timeout, timeout, pending), consensus.Policy{Failures: negative}, false},
		{votes(timeout, timeout, timeout, valid, pending), consensus.Policy{Failures: negative}, true},

		// Input Aggregate rejects is decided: waiting cannot repair it.
		{append(answers(make(chan int)), consensus.Vote{}), consensus.Policy{}, true},
		{votes(pending), consensus.Policy{Failures: "x"}, true},
		{nil, consensus.Policy{}, true},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%v/%s/%s", labels(tt.votes), tt.p.Disagreement, tt.p.Failures)
		t.Run(name, func(t *testing.T) {
			if got := (consensus.Majority{}).Decided(tt.votes, tt.p); got != tt.want {
				t.Errorf("Decided = %t, want %t", got, tt.want)
			}
		})
	}
}

func labels(vs []consensus.Vote) []consensus.Label {
	ls := make([]consensus.Label, len(vs))
	for i, v := range vs {
		ls[i] = v.Label
		if ls[i] == "" {
			ls[i] = "_"
		}
	}
	return ls
}

// TestMajority_Decided_exhaustive checks, for every way up to 5 replicas can
// stand, that whenever Decided reports true, every way the pending replicas
// can still report (cancelled included, as Runner records them) gives the
// same winner or, under fail_hard, the same error.
func TestMajority_Decided_exhaustive(t *testing.T) {
	alphabet := []consensus.Vote{
		{Label: valid}, {Label: invalid}, {Label: "RETRY"},
		{Label: ok, Answer: "a"}, {Label: ok, Answer: "b"},
		{Label: timeout}, {Label: cancelled}, // ERROR counts as TIMEOUT does
	}
	plain := func(a any) (string, error) { s, _ := a.(string); return s, nil }
	var policies []consensus.Policy
	for _, dp := range []consensus.DisagreementPolicy{consensus.BestEffort, consensus.ReturnAll, consensus.FailHard} {
		for _, fm := range []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative} {
			policies = append(policies, consensus.Policy{Disagreement: dp, Failures: fm, Key: plain})
		}
	}
	type verdict struct {
		winner bool
		label  consensus.Label
		answer any
		err    error
	}
	judge := func(vs []consensus.Vote, p consensus.Policy) verdict {
		out, err := consensus.Majority{}.Aggregate(vs, p)
		v := verdict{winner: out.Winner >= 0}
		if v.winner {
			v.label, v.answer = out.Label, out.Answer
		}
		var oe *consensus.OutcomeError
		if errors.As(err, &oe) {
			// The call fails: which group led no longer matters.
			v = verdict{err: oe.Err}
		} else if err != nil {
			t.Fatalf("Aggregate(%v): %v", labels(vs), err)
		}
		return v
	}
	// each calls f with every vector of n votes over symbols (nil = pending).
	var each func(vs []consensus.Vote, i int, symbols []consensus.Vote, f func())
	each = func(vs []consensus.Vote, i int, symbols []consensus.Vote, f func()) {
		if i == len(vs) {
			f()
			return
		}
		for _, s := range symbols {
			vs[i] = s
			each(vs, i+1, symbols, f)
		}
	}
	withPending := append([]consensus.Vote{{}}, alphabet...)
	checked := 0
	for n := 1; n <= 5; n++ {
		partial := make([]consensus.Vote, n)
		for _, p := range policies {
			each(partial, 0, withPending, func() {
				var open []int
				for i, v := range partial {
					if v.Label == "" {
						open = append(open, i)
					}
				}
				if !(consensus.Majority{}).Decided(partial, p) {
					if len(open) == 0 {
						t.Fatalf("%v: every replica reported, yet not decided", labels(partial))
					}
					return
				}
				full := append([]consensus.Vote(nil), partial...)
				var first *verdict
				fill := make([]consensus.Vote, len(open))
				each(fill, 0, alphabet, func() {
					for j, i := range open {
						full[i] = fill[j]
					}
					got := judge(full, p)
					checked++
					if first == nil {
						first = &got
						return
					}
					if got != *first {
						t.Fatalf("%v under %s/%s decided, but completion %v gives %+v, another gave %+v",
							labels(partial), p.Disagreement, p.Failures, labels(full), got, *first)
					}
				})
			})
		}
	}
	if checked == 0 {
		t.Fatal("no decided case was checked")
	}
}
