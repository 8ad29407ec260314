package consensus_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vouchkit/vouch/consensus"
)

const (
	valid     = consensus.LabelValid
	invalid   = consensus.LabelInvalid
	ok        = consensus.LabelOK
	timeout   = consensus.LabelTimeout
	errLabel  = consensus.LabelError
	cancelled = consensus.LabelCancelled
	pending   = consensus.Label("")
)

// votes builds verdict-only votes, with sessions 100, 101, ... .
func votes(labels ...consensus.Label) []consensus.Vote {
	vs := make([]consensus.Vote, len(labels))
	for i, l := range labels {
		vs[i] = consensus.Vote{Session: int64(100 + i), Label: l}
	}
	return vs
}

// answers builds OK votes carrying the given answers.
func answers(as ...any) []consensus.Vote {
	vs := make([]consensus.Vote, len(as))
	for i, a := range as {
		vs[i] = consensus.Vote{Session: int64(100 + i), Label: ok, Answer: a}
	}
	return vs
}

// summary is the part of an Outcome the table tests compare.
type summary struct {
	Label         consensus.Label
	Winner        int
	Agreeing      int
	Agreement     float64
	Confidence    float64
	LowConfidence bool
	Disagreement  bool
}

func summarize(o consensus.Outcome) summary {
	return summary{o.Label, o.Winner, o.Agreeing, o.Agreement, o.Confidence, o.LowConfidence, o.Disagreement}
}

// TestMajority_Aggregate_section7 runs every row of the spec's section 7
// table about replicas under every disagreement policy. Expected figures
// follow the package doc: agreement = agreeing/(agreeing+against),
// confidence = Posterior(agreeing, against), worked here by hand.
func TestMajority_Aggregate_section7(t *testing.T) {
	nonVotes, negative := consensus.FailuresNonVotes, consensus.FailuresNegative
	rows := []struct {
		name     string
		votes    []consensus.Vote
		failures consensus.FailureMode
		want     summary
		hardErr  error // the error under fail_hard; nil for none
	}{
		{"agree", votes(valid, valid, valid), nonVotes,
			summary{valid, 0, 3, 1, 15.0 / 16, false, false}, nil},
		{"agree/negative", votes(valid, valid, valid), negative,
			summary{valid, 0, 3, 1, 15.0 / 16, false, false}, nil},
		{"single replica", votes(invalid), nonVotes,
			summary{invalid, 0, 1, 1, 3.0 / 4, false, false}, nil},
		{"disagree 2 of 3", votes(invalid, valid, valid), nonVotes,
			summary{valid, 1, 2, 2.0 / 3, 11.0 / 16, true, true}, consensus.ErrDisagreement},
		{"disagree 4 of 5", votes(valid, valid, invalid, valid, valid), nonVotes,
			summary{valid, 0, 4, 0.8, 57.0 / 64, true, true}, consensus.ErrDisagreement},
		{"all failed", votes(timeout, errLabel, timeout), nonVotes,
			summary{timeout, -1, 0, 0, 0, true, false}, consensus.ErrAllFailed},
		{"all failed/negative", votes(errLabel, errLabel, timeout), negative,
			summary{errLabel, -1, 0, 0, 0, true, false}, consensus.ErrAllFailed},
		{"some timed out/non-votes", votes(valid, timeout, valid), nonVotes,
			summary{valid, 0, 2, 1, 7.0 / 8, false, false}, nil},
		{"some timed out/negative", votes(valid, timeout, valid), negative,
			summary{valid, 0, 2, 2.0 / 3, 11.0 / 16, true, true}, consensus.ErrDisagreement},
		{"most timed out/non-votes", votes(timeout, valid, errLabel), nonVotes,
			summary{valid, 1, 1, 1, 3.0 / 4, true, false}, nil},
		{"most timed out/negative", votes(timeout, valid, timeout), negative,
			summary{timeout, -1, 0, 0, 0, true, true}, consensus.ErrDisagreement},
		{"failures tie the leader/negative", votes(valid, valid, timeout, errLabel, invalid), negative,
			summary{timeout, -1, 0, 0, 0, true, true}, consensus.ErrDisagreement},
	}
	policies := []consensus.DisagreementPolicy{"", consensus.BestEffort, consensus.ReturnAll, consensus.FailHard}
	for _, row := range rows {
		for _, dp := range policies {
			t.Run(row.name+"/"+string(dp), func(t *testing.T) {
				p := consensus.Policy{Disagreement: dp, Failures: row.failures}
				out, err := consensus.Majority{}.Aggregate(row.votes, p)
				if diff := cmp.Diff(row.want, summarize(out)); diff != "" {
					t.Errorf("outcome mismatch (-want +got):\n%s", diff)
				}
				var wantErr error
				if dp == consensus.FailHard {
					wantErr = row.hardErr
				}
				if !errors.Is(err, wantErr) || (wantErr == nil) != (err == nil) {
					t.Fatalf("err = %v, want %v", err, wantErr)
				}
				if err != nil {
					var oe *consensus.OutcomeError
					if !errors.As(err, &oe) {
						t.Fatalf("err %T is not an *OutcomeError", err)
					}
					if diff := cmp.Diff(out, oe.Outcome); diff != "" {
						t.Errorf("error's outcome differs from the returned one (-returned +error):\n%s", diff)
					}
				}
				if diff := cmp.Diff(row.votes, out.Votes); diff != "" {
					t.Errorf("Votes (-want +got):\n%s", diff)
				}
				wantVerdicts := make([]consensus.Label, len(row.votes))
				for i, v := range row.votes {
					wantVerdicts[i] = v.Label
				}
				if diff := cmp.Diff(wantVerdicts, out.Verdicts); diff != "" {
					t.Errorf("Verdicts (-want +got):\n%s", diff)
				}
				if out.Replicas != len(row.votes) || out.Strategy != consensus.StrategyMajority {
					t.Errorf("Replicas, Strategy = %d, %q; want %d, majority", out.Replicas, out.Strategy, len(row.votes))
				}
			})
		}
	}
}

func TestMajority_Aggregate_ties(t *testing.T) {
	tests := []struct {
		name       string
		votes      []consensus.Vote
		failures   consensus.FailureMode
		wantLabel  consensus.Label
		wantWinner int
	}{
		{"invalid beats valid", votes(valid, invalid, timeout), "", invalid, 1},
		{"false beats true", votes(consensus.LabelTrue, consensus.LabelFalse, errLabel), "", consensus.LabelFalse, 1},
		{"retry beats valid", votes(valid, "RETRY", timeout), "", "RETRY", 1},
		{"invalid beats needs_spec", votes("NEEDS_SPEC", invalid, timeout), "", invalid, 1},
		{"2-2 of 5, invalid later", votes(valid, valid, invalid, invalid, timeout), "", invalid, 2},
		{"answers: first replica's group", answers("b", "a"), "", ok, 0},
		{"answers: earliest group, not earliest answer", answers("x", "y", "y", "x"), "", ok, 0},
		{"larger group beats caution", votes(invalid, valid, valid), "", valid, 1},
		{"tie with failures: no winner", votes(valid, timeout), consensus.FailuresNegative, timeout, -1},
		{"cancelled never competes", votes(valid, cancelled, cancelled), consensus.FailuresNegative, valid, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := consensus.Majority{}.Aggregate(tt.votes, consensus.Policy{Failures: tt.failures})
			if err != nil {
				t.Fatal(err)
			}
			if out.Label != tt.wantLabel || out.Winner != tt.wantWinner {
				t.Errorf("Label, Winner = %s, %d; want %s, %d", out.Label, out.Winner, tt.wantLabel, tt.wantWinner)
			}
		})
	}
}

func TestMajority_Aggregate_answers(t *testing.T) {
	type pair struct {
		B string `json:"b"`
		A int    `json:"a"`
	}
	vs := answers(
		"something else",
		map[string]any{"a": 1, "b": "x  y"},
		json.RawMessage(`{"b": "\tx y ", "a": 1.0}`),
		pair{A: 1, B: "x\ny"},
		"something else ",
	)
	out, err := consensus.Majority{}.Aggregate(vs, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Winner != 1 || out.Agreeing != 3 || !out.Disagreement {
		t.Errorf("Winner, Agreeing, Disagreement = %d, %d, %t; want 1, 3, true", out.Winner, out.Agreeing, out.Disagreement)
	}
	if diff := cmp.Diff(vs[1].Answer, out.Answer); diff != "" {
		t.Errorf("Answer is not the winning vote's own answer (-want +got):\n%s", diff)
	}

	// A host key that ignores case merges what the default keeps apart.
	lower := func(a any) (string, error) { return strings.ToLower(a.(string)), nil }
	out, err = consensus.Majority{}.Aggregate(answers("Yes", "no", "YES"), consensus.Policy{Key: lower})
	if err != nil {
		t.Fatal(err)
	}
	if out.Answer != "Yes" || out.Agreeing != 2 {
		t.Errorf("custom key: Answer, Agreeing = %v, %d; want Yes, 2", out.Answer, out.Agreeing)
	}

	// The same answer under two labels is two groups.
	out, err = consensus.Majority{}.Aggregate([]consensus.Vote{{Label: valid, Answer: "a"}, {Label: invalid, Answer: "a"}}, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Agreeing != 1 || !out.Disagreement {
		t.Errorf("labels: Agreeing, Disagreement = %d, %t; want 1, true", out.Agreeing, out.Disagreement)
	}
}

// A worker's answer of a number beyond a double's range is valid JSON:
// it is a vote like any other, and fails neither the count nor Decided.
func TestMajority_Aggregate_numberBeyondDouble(t *testing.T) {
	vs := answers(json.RawMessage(`1e400`), json.RawMessage(`7`), json.RawMessage(`7`))
	out, err := consensus.Majority{}.Aggregate(vs, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	type counts struct{ Winner, Agreeing, Against int }
	if diff := cmp.Diff(counts{1, 2, 1}, counts{out.Winner, out.Agreeing, out.Against}); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	running := append(vs[:1:1], consensus.Vote{}, consensus.Vote{})
	if (consensus.Majority{}).Decided(running, consensus.Policy{}) {
		t.Error("Decided after one answer of 1e400 with two replicas running")
	}
}

func TestMajority_Aggregate_badInput(t *testing.T) {
	tests := []struct {
		name  string
		votes []consensus.Vote
		p     consensus.Policy
	}{
		{"no votes", nil, consensus.Policy{}},
		{"empty label", votes(valid, pending, valid), consensus.Policy{}},
		{"unknown policy", votes(valid), consensus.Policy{Disagreement: "majority"}},
		{"unknown failure mode", votes(valid), consensus.Policy{Failures: "ignore"}},
		{"answer the key rejects", answers("a", make(chan int)), consensus.Policy{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := consensus.Majority{}.Aggregate(tt.votes, tt.p)
			if !errors.Is(err, consensus.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if !strings.HasPrefix(err.Error(), "consensus: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			if diff := cmp.Diff(consensus.Outcome{}, out); diff != "" {
				t.Errorf("outcome is not zero:\n%s", diff)
			}
		})
	}
}

func TestMajority_Aggregate_doesNotAlias(t *testing.T) {
	in := votes(valid, valid, invalid)
	out, err := consensus.Majority{}.Aggregate(in, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	out.Votes[0].Label = invalid
	if in[0].Label != valid {
		t.Error("changing Outcome.Votes changed the caller's votes")
	}
}

func TestMajority_Aggregate_confidenceMonotone(t *testing.T) {
	conf := func(vs []consensus.Vote) float64 {
		out, err := consensus.Majority{}.Aggregate(vs, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		return out.Confidence
	}
	// In agreement, for a fixed replica count.
	five := []float64{
		conf(votes(valid, invalid, "RETRY", "NEEDS_SPEC", timeout)),
		conf(votes(valid, valid, invalid, "RETRY", timeout)),
		conf(votes(valid, valid, valid, invalid, invalid)),
		conf(votes(valid, valid, valid, valid, invalid)),
		conf(votes(valid, valid, valid, valid, valid)),
	}
	for i := 1; i < len(five); i++ {
		if five[i] <= five[i-1] {
			t.Errorf("5 replicas: confidence with %d agreeing = %v, not above %v with %d", i+1, five[i], five[i-1], i)
		}
	}
	// In replica count, for unanimous outcomes.
	one, three, all5 := conf(votes(valid)), conf(votes(valid, valid, valid)), five[4]
	if !(one < three && three < all5 && all5 < 1) {
		t.Errorf("unanimous confidences 1, 3, 5 replicas = %v, %v, %v; want increasing and below 1", one, three, all5)
	}
	// An early quorum of 3 of 5 is as strong as a unanimous 3.
	if q := conf(votes(valid, valid, valid, cancelled, cancelled)); q != three {
		t.Errorf("3 of 5 with 2 cancelled: confidence %v, want %v as for 3 of 3", q, three)
	}
}

func TestFor(t *testing.T) {
	for _, s := range []consensus.Strategy{"", consensus.StrategyMajority} {
		agg, err := consensus.For(s)
		if err != nil || agg != (consensus.Majority{}) {
			t.Errorf("For(%q) = %v, %v; want Majority, nil", s, agg, err)
		}
	}
	if agg, err := consensus.For(consensus.StrategyMedian); err != nil || !cmp.Equal(agg, consensus.Median{}) {
		t.Errorf("For(median) = %v, %v; want Median, nil", agg, err)
	}
	if agg, err := consensus.For(consensus.StrategyMedianOfMeans); err != nil || agg != (consensus.MedianOfMeans{}) {
		t.Errorf("For(median_of_means) = %v, %v; want MedianOfMeans, nil", agg, err)
	}
	if agg, err := consensus.For(consensus.StrategyModelEnsemble); agg != nil || !errors.Is(err, consensus.ErrNotAvailable) {
		t.Errorf("For(model_ensemble) = %v, %v; want nil, ErrNotAvailable", agg, err)
	}
	if _, err := consensus.For("plurality"); !errors.Is(err, consensus.ErrInvalid) || errors.Is(err, consensus.ErrNotAvailable) {
		t.Errorf("For(plurality): err = %v, want ErrInvalid only", err)
	}
}

func TestOutcomeError_Error(t *testing.T) {
	_, err := consensus.Majority{}.Aggregate(votes(valid, invalid, timeout), consensus.Policy{Disagreement: consensus.FailHard})
	want := "consensus: replicas disagree (verdicts VALID INVALID TIMEOUT)"
	if err == nil || err.Error() != want {
		t.Errorf("Error() = %v, want %q", err, want)
	}
}
