package consensus_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
)

// outputs returns cast votes answering each raw JSON output, sessions 1, 2, …
func outputs(raw ...string) []consensus.Vote {
	vs := make([]consensus.Vote, len(raw))
	for i, o := range raw {
		switch o {
		case "ERROR", "TIMEOUT", "CANCELLED", "":
			vs[i] = consensus.Vote{Session: int64(i + 1), Label: consensus.Label(o)}
		default:
			vs[i] = consensus.Vote{Session: int64(i + 1), Label: consensus.LabelOK, Answer: json.RawMessage(o)}
		}
	}
	return vs
}

func TestParseNumber(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want float64
	}{
		{json.RawMessage(`18`), 18}, {json.RawMessage(`18.0`), 18}, {json.RawMessage(`1.8e1`), 18},
		{json.RawMessage(` "18" `), 18}, {json.RawMessage(`" 18\n"`), 18}, {json.RawMessage(`-0.5`), -0.5},
		{"18", 18}, {"-2E-3", -0.002}, {18, 18}, {float32(0.5), 0.5}, {json.Number("7"), 7}, {uint8(3), 3},
	} {
		got, err := consensus.ParseNumber(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseNumber(%#v) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []any{
		json.RawMessage(`"+5"`), json.RawMessage(`"1,000"`), json.RawMessage(`"$18"`), json.RawMessage(`"18 km"`),
		json.RawMessage(`"about 18"`), json.RawMessage(`"0x10"`), json.RawMessage(`"Infinity"`), json.RawMessage(`"NaN"`),
		json.RawMessage(`1e400`), json.RawMessage(`"1e400"`), json.RawMessage(`{"x":1}`), json.RawMessage(`[1]`),
		json.RawMessage(`true`), json.RawMessage(`null`), json.RawMessage(``), json.RawMessage(`1 2`), json.RawMessage(`"1" "2"`),
		json.RawMessage(`01`), json.RawMessage(`.5`), json.RawMessage(`"1_000"`), "", " ", "18.", nil, math.NaN(), true,
		json.RawMessage("\f\"0\""), json.RawMessage("\v18"), // not JSON: whitespace JSON does not allow
		map[string]int{"x": 1},
	} {
		if got, err := consensus.ParseNumber(in); !errors.Is(err, consensus.ErrNotNumber) {
			t.Errorf("ParseNumber(%#v) = %v, %v; want ErrNotNumber", in, got, err)
		}
	}
}

func TestTolerance_Agrees(t *testing.T) {
	for _, tc := range []struct {
		tol  consensus.Tolerance
		x, m float64
		want bool
	}{
		{consensus.Tolerance{}, 18, 18, true},
		{consensus.Tolerance{}, 18.5, 18, false},
		{consensus.Tolerance{Absolute: 0.5}, 18.5, 18, true},
		{consensus.Tolerance{Absolute: 0.5}, 17.4, 18, false},
		{consensus.Tolerance{Relative: 0.1}, 110, 100, true},
		{consensus.Tolerance{Relative: 0.1}, 111, 100, false},
		{consensus.Tolerance{Relative: 0.1}, -95, -100, true},
		{consensus.Tolerance{Absolute: 2, Relative: 0.01}, 102, 100, true},   // the absolute bound is wider
		{consensus.Tolerance{Absolute: 1, Relative: 0.05}, 1040, 1000, true}, // the relative bound is wider
	} {
		if got := tc.tol.Agrees(tc.x, tc.m); got != tc.want {
			t.Errorf("%+v.Agrees(%v, %v) = %v, want %v", tc.tol, tc.x, tc.m, got, tc.want)
		}
	}
	for _, bad := range []consensus.Tolerance{{Absolute: -1}, {Relative: -0.1}, {Absolute: math.NaN()}, {Relative: math.Inf(1)}} {
		if err := bad.Check(); !errors.Is(err, consensus.ErrInvalid) {
			t.Errorf("%+v.Check() = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestMedian_Aggregate(t *testing.T) {
	type want struct {
		value                     float64
		winner, agreeing, against int
		agreement, confidence     float64
		low                       bool
	}
	for _, tc := range []struct {
		name  string
		agg   consensus.Aggregator
		votes []consensus.Vote
		want  want
	}{
		{"18, 18.0 and \"18\" agree exactly", consensus.Median{}, outputs(`18`, `18.0`, `"18"`),
			want{18, 0, 3, 0, 1, consensus.Posterior(3, 0), false}},
		{"one off", consensus.Median{}, outputs(`18`, `19`, `18`),
			want{18, 0, 2, 1, 2.0 / 3, consensus.Posterior(2, 1), true}},
		{"one off, within tolerance", consensus.Median{Tolerance: consensus.Tolerance{Absolute: 1}}, outputs(`18`, `19`, `18`),
			want{18, 0, 3, 0, 1, consensus.Posterior(3, 0), false}},
		{"relative tolerance", consensus.Median{Tolerance: consensus.Tolerance{Relative: 0.05}}, outputs(`100`, `104`, `96`, `200`, `97`),
			want{100, 0, 4, 1, 0.8, consensus.Posterior(4, 1), true}},
		{"not a number is no vote", consensus.Median{}, outputs(`"about 18"`, `18`, `18`),
			want{18, 1, 2, 0, 1, consensus.Posterior(2, 0), false}},
		{"lower median of four", consensus.Median{}, outputs(`20`, `10`, `ERROR`, `30`, `40`),
			want{20, 0, 1, 3, 0.25, consensus.Posterior(1, 3), true}},
		{"a failure is no vote", consensus.Median{}, outputs(`5`, `TIMEOUT`, `5`),
			want{5, 0, 2, 0, 1, consensus.Posterior(2, 0), false}},
		{"median of means of five", consensus.MedianOfMeans{}, outputs(`10`, `12`, `11`, `10`, `14`),
			// blocks {10, 10}, {12, 14}, {11}: means 10, 13, 11; median 11
			want{11, 2, 1, 4, 0.2, consensus.Posterior(1, 4), true}},
		{"median of means of three is their median", consensus.MedianOfMeans{}, outputs(`3`, `1`, `2`),
			want{2, 2, 1, 2, 1.0 / 3, consensus.Posterior(1, 2), true}},
		{"median of means within tolerance", consensus.MedianOfMeans{Tolerance: consensus.Tolerance{Absolute: 1}}, outputs(`10`, `12`, `11`, `10`, `14`),
			want{11, 0, 4, 1, 0.8, consensus.Posterior(4, 1), true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.agg.Aggregate(tc.votes, consensus.Policy{})
			if err != nil {
				t.Fatal(err)
			}
			got := want{out.Value, out.Winner, out.Agreeing, out.Against, out.Agreement, out.Confidence, out.LowConfidence}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMedianOfMeans_noneAgree(t *testing.T) {
	// blocks {1, 8}, {2}, {4}: means 4.5, 2, 4; median 4 (a number: agrees)
	// blocks {1, 9}, {2}, {6}: means 5, 2, 6; median 5: no number is 5
	out, err := consensus.MedianOfMeans{}.Aggregate(outputs(`1`, `2`, `6`, `9`), consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Value != 5 || out.Winner != -1 || !out.LowConfidence || out.Confidence != 0 {
		t.Errorf("outcome %+v: want value 5, no winner, low confidence", out)
	}
	_, err = consensus.MedianOfMeans{}.Aggregate(outputs(`1`, `2`, `6`, `9`), consensus.Policy{Disagreement: consensus.FailHard})
	if !errors.Is(err, consensus.ErrDisagreement) {
		t.Errorf("fail_hard: err %v, want ErrDisagreement", err)
	}
}

func TestMedian_Aggregate_weighted(t *testing.T) {
	// Session 3 is far more reliable than 1 and 2 together: the weighted
	// median is its number.
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.6, 2: 0.6, 3: 0.99}}
	out, err := consensus.Median{Reliabilities: &rel}.Aggregate(outputs(`10`, `20`, `30`), consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	w1, w3 := consensus.Weight(0.6), consensus.Weight(0.99)
	if out.Value != 30 || out.Winner != 2 || out.Agreeing != 1 || out.Against != 2 {
		t.Errorf("outcome %+v: want the weighted median 30, replica 2 alone agreeing", out)
	}
	if want := []float64{w1, w1, w3}; !slices.Equal(out.Weights, want) || out.Score != w3 {
		t.Errorf("weights %v, score %v; want %v, %v", out.Weights, out.Score, want, w3)
	}
	if want := consensus.Credence([]float64{w3, 2 * w1}, 0, consensus.Tempering(3, 0)); out.Confidence != want {
		t.Errorf("confidence %v, want %v", out.Confidence, want)
	}
	// Equal weights: the lower median.
	same := consensus.Reliabilities{}
	out, _ = consensus.Median{Reliabilities: &same}.Aggregate(outputs(`40`, `10`, `30`, `20`), consensus.Policy{})
	if out.Value != 20 {
		t.Errorf("equal weights: value %v, want the lower median 20", out.Value)
	}
	// Every voter a coin (weight 0): they weigh alike.
	coins := consensus.Reliabilities{Prior: 0.5}
	out, _ = consensus.Median{Reliabilities: &coins}.Aggregate(outputs(`3`, `1`, `2`), consensus.Policy{})
	if out.Value != 2 {
		t.Errorf("weights 0: value %v, want the median 2", out.Value)
	}
}

func TestMedian_Aggregate_policies(t *testing.T) {
	_, err := consensus.Median{}.Aggregate(outputs(`1`, `2`, `1`), consensus.Policy{Disagreement: consensus.FailHard})
	if !errors.Is(err, consensus.ErrDisagreement) {
		t.Errorf("fail_hard, one off: err %v, want ErrDisagreement", err)
	}
	_, err = consensus.Median{}.Aggregate(outputs(`"x"`, `ERROR`, `null`), consensus.Policy{Disagreement: consensus.FailHard})
	if !errors.Is(err, consensus.ErrAllFailed) {
		t.Errorf("fail_hard, no number: err %v, want ErrAllFailed", err)
	}
	out, err := consensus.Median{}.Aggregate(outputs(`1`, `ERROR`, `TIMEOUT`), consensus.Policy{Failures: consensus.FailuresNegative})
	if err != nil || out.Winner != -1 {
		t.Errorf("failures as negative evidence outnumber the number: %+v, %v; want no winner", out, err)
	}
	out, _ = consensus.Median{}.Aggregate(outputs(`1`, `1`, `TIMEOUT`), consensus.Policy{Failures: consensus.FailuresNegative})
	if out.Winner != 0 || out.Against != 1 || out.Agreement != 2.0/3 {
		t.Errorf("two numbers and a failure as negative evidence: %+v", out)
	}
	for _, tc := range []struct {
		name  string
		agg   consensus.Aggregator
		votes []consensus.Vote
	}{
		{"no votes", consensus.Median{}, nil},
		{"empty label", consensus.Median{}, outputs(`1`, ``)},
		{"bad tolerance", consensus.Median{Tolerance: consensus.Tolerance{Absolute: -1}}, outputs(`1`)},
		{"bad reliabilities", consensus.Median{Reliabilities: &consensus.Reliabilities{Prior: 2}}, outputs(`1`)},
		{"bad tolerance of means", consensus.MedianOfMeans{Tolerance: consensus.Tolerance{Relative: -1}}, outputs(`1`)},
	} {
		if _, err := tc.agg.Aggregate(tc.votes, consensus.Policy{}); !errors.Is(err, consensus.ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", tc.name, err)
		}
	}
}

func TestOutcome_Backers_numeric(t *testing.T) {
	votes := outputs(`18`, `"18.4"`, `20`, `"n/a"`, `17.7`)
	out, err := consensus.Median{Tolerance: consensus.Tolerance{Absolute: 0.5}}.Aggregate(votes, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out.Backers(nil), []int{0, 1, 4}; !slices.Equal(got, want) {
		t.Errorf("Backers = %v, want %v", got, want)
	}
}

func TestMedian_Decided(t *testing.T) {
	for _, tc := range []struct {
		name  string
		agg   consensus.Aggregator
		votes []consensus.Vote
		p     consensus.Policy
		want  bool
	}{
		{"3 of 5 equal: 2 more cannot move the median", consensus.Median{}, outputs(`18`, ``, `18`, ``, `18`), consensus.Policy{}, true},
		{"2 of 3 equal: 1 more cannot move it", consensus.Median{}, outputs(`18`, `18`, ``), consensus.Policy{}, true},
		{"2 of 3 apart: the third decides", consensus.Median{}, outputs(`18`, `19`, ``), consensus.Policy{}, false},
		{"2 of 3 apart within tolerance", consensus.Median{Tolerance: consensus.Tolerance{Absolute: 1}}, outputs(`18`, `19`, ``), consensus.Policy{}, true},
		{"2 of 5 equal: 3 more can move it", consensus.Median{}, outputs(`18`, `18`, ``, ``, ``), consensus.Policy{}, false},
		{"3 of 5 apart", consensus.Median{}, outputs(`1`, `2`, `3`, ``, ``), consensus.Policy{}, false},
		{"no number yet", consensus.Median{}, outputs(`"x"`, ``, ``), consensus.Policy{}, false},
		{"every vote in", consensus.Median{}, outputs(`1`, `2`, `3`), consensus.Policy{}, true},
		{"fail_hard waits", consensus.Median{}, outputs(`18`, `18`, ``), consensus.Policy{Disagreement: consensus.FailHard}, false},
		{"negative evidence waits", consensus.Median{}, outputs(`18`, `18`, ``), consensus.Policy{Failures: consensus.FailuresNegative}, false},
		{"median of means, 3 of 5 equal", consensus.MedianOfMeans{}, outputs(`18`, `18`, `18`, ``, ``), consensus.Policy{}, false},
		// The fifth number shares a block with the second: it moves one
		// mean of three, never the median.
		{"median of means, 4 of 5 equal", consensus.MedianOfMeans{}, outputs(`18`, `18`, `18`, `18`, ``), consensus.Policy{}, true},
		{"median of means, 4 of 5, the odd one pending alone", consensus.MedianOfMeans{}, outputs(`18`, `18`, ``, `18`, `18`), consensus.Policy{}, true},
		{"median of means, 4 of 5 apart", consensus.MedianOfMeans{}, outputs(`18`, `20`, `18`, `16`, ``), consensus.Policy{}, false},
		// Two answers above 1.5e308 to come would make it the median:
		// the trials must place them above every number answered.
		{"numbers near the largest double", consensus.Median{}, outputs(`1e308`, `1e308`, `1.5e308`, ``, ``), consensus.Policy{}, false},
		{"numbers near the largest double, below", consensus.Median{}, outputs(`-1e308`, `-1e308`, `-1.5e308`, ``, ``), consensus.Policy{}, false},
		// A tolerance Check refuses is decided: waiting cannot repair it.
		{"a tolerance out of range", consensus.Median{Tolerance: consensus.Tolerance{Relative: 1e300}}, outputs(`18`, `19`, ``), consensus.Policy{}, true},
		{"median of means, 4 of 5 within a wide tolerance", consensus.MedianOfMeans{Tolerance: consensus.Tolerance{Relative: 1}}, outputs(`18`, `18`, `18`, `18`, ``), consensus.Policy{}, true},
	} {
		if got := tc.agg.Decided(tc.votes, tc.p); got != tc.want {
			t.Errorf("%s: Decided = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMedian_Decided_property: whenever Decided says the numbers so far
// settle the aggregate, every way the running replicas could end (random
// numbers, or none) leaves the aggregate within the tolerance of the
// aggregate of the numbers so far.
func TestMedian_Decided_property(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 1))
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.9, 2: 0.7, 3: 0.6, 4: 0.95, 5: 0.55}}
	decided := 0
	for range 3000 {
		n := []int{3, 5}[r.IntN(2)]
		tol := consensus.Tolerance{Absolute: float64(r.IntN(3)), Relative: float64(r.IntN(2)) * 0.1}
		aggs := []consensus.Aggregator{
			consensus.Median{Tolerance: tol},
			consensus.MedianOfMeans{Tolerance: tol},
			consensus.Median{Tolerance: tol, Reliabilities: &rel, Launched: []int64{1, 2, 3, 4, 5}},
		}
		agg := aggs[r.IntN(len(aggs))]
		full := make([]consensus.Vote, n)
		partial := make([]consensus.Vote, n)
		for i := range full {
			full[i] = consensus.Vote{Session: int64(i + 1), Label: consensus.LabelOK, Answer: 10 + r.IntN(4)}
			if r.IntN(6) == 0 {
				full[i].Answer = "n/a"
			}
			partial[i] = full[i]
			if r.IntN(2) == 0 {
				partial[i] = consensus.Vote{Session: int64(i + 1)}
				if r.IntN(3) == 0 {
					full[i].Answer = r.NormFloat64() * 1e6
				}
			}
		}
		if !agg.Decided(partial, consensus.Policy{}) {
			continue
		}
		now := slices.Clone(partial)
		for i := range now {
			if now[i].Label == "" {
				now[i].Label = consensus.LabelCancelled
			}
		}
		early, err1 := agg.Aggregate(now, consensus.Policy{})
		late, err2 := agg.Aggregate(full, consensus.Policy{})
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if slices.ContainsFunc(partial, func(v consensus.Vote) bool { return v.Label == "" }) {
			decided++
		}
		if !tol.Agrees(late.Value, early.Value) {
			t.Fatalf("%T decided on %v at %v, but all votes give %v (tolerance %+v)", agg, partial, early.Value, late.Value, tol)
		}
	}
	if decided == 0 {
		t.Error("no call was decided early: the property was never put to the test")
	}
}

// TestMedian_Aggregate_property: the median is a number some replica
// answered, at least half of the numbers lie at or below it and at least
// half at or above it, and it does not depend on the order of the votes.
func TestMedian_Aggregate_property(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 2))
	for range 2000 {
		n := 1 + r.IntN(5)
		votes := make([]consensus.Vote, n)
		var xs []float64
		for i := range votes {
			x := float64(r.IntN(7)) - 3
			votes[i] = consensus.Vote{Session: int64(i + 1), Label: consensus.LabelOK, Answer: x}
			xs = append(xs, x)
		}
		out, err := consensus.Median{}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		var below, above int
		for _, x := range xs {
			if x <= out.Value {
				below++
			}
			if x >= out.Value {
				above++
			}
		}
		if !slices.Contains(xs, out.Value) || 2*below < n || 2*above < n-1 {
			t.Fatalf("median of %v = %v", xs, out.Value)
		}
		shuffled := slices.Clone(votes)
		r.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if again, _ := (consensus.Median{}).Aggregate(shuffled, consensus.Policy{}); again.Value != out.Value || again.Agreeing != out.Agreeing {
			t.Fatalf("median of %v = %v, of the same shuffled %v", xs, out.Value, again.Value)
		}
	}
}

func TestMedianOfMeans_Aggregate_hugeNumbersDoNotOverflow(t *testing.T) {
	// Five workers answering 1.7e308: a block of two summed before
	// dividing is +Inf; the mean of each block is 1.7e308.
	out, err := consensus.MedianOfMeans{}.Aggregate(outputs(`1.7e308`, `1.7e308`, `1.7e308`, `1.7e308`, `1.7e308`), consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Value != 1.7e308 || out.Agreeing != 5 || out.Winner != 0 {
		t.Errorf("outcome %+v: want value 1.7e308, all five agreeing", out)
	}
	out, err = consensus.MedianOfMeans{}.Aggregate(outputs(`-1.7e308`, `-1.7e308`, `-1.7e308`, `-1.7e308`), consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Value != -1.7e308 || out.Agreeing != 4 {
		t.Errorf("outcome %+v: want value -1.7e308, all four agreeing", out)
	}
}

func TestTolerance_Agrees_extremes(t *testing.T) {
	for _, tc := range []struct {
		tol  consensus.Tolerance
		x, m float64
		want bool
	}{
		{consensus.Tolerance{Relative: 1}, -1.7e308, 1.7e308, false},
		{consensus.Tolerance{Relative: 1.5}, -1, 1, false},
		{consensus.Tolerance{Relative: 1}, 0, 1, true},
		{consensus.Tolerance{Absolute: 1e308}, -1.7e308, 1.7e308, false},
		{consensus.Tolerance{Absolute: 1.7e308}, 1.7e308, 1e308, true},
	} {
		if got := tc.tol.Agrees(tc.x, tc.m); got != tc.want {
			t.Errorf("%+v.Agrees(%v, %v) = %v, want %v", tc.tol, tc.x, tc.m, got, tc.want)
		}
	}
}

func TestTolerance_Check_relativeAboveOne(t *testing.T) {
	if err := (consensus.Tolerance{Relative: 1.5}).Check(); !errors.Is(err, consensus.ErrInvalid) {
		t.Errorf("Check of relative 1.5: err %v, want ErrInvalid", err)
	}
	if err := (consensus.Tolerance{Relative: 1}).Check(); err != nil {
		t.Errorf("Check of relative 1: %v", err)
	}
}
