package consensus_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
)

// panel returns verdict-only votes of sessions 1, 2, … from a compact
// tally: "V" valid, "I" invalid, "E" error, "C" cancelled, "." pending.
func panel(s string) []consensus.Vote {
	vs := make([]consensus.Vote, len(s))
	for i, c := range s {
		vs[i] = consensus.Vote{Session: int64(i + 1), Label: map[rune]consensus.Label{'V': valid, 'I': invalid, 'E': errLabel, 'C': cancelled, '.': ""}[c]}
	}
	return vs
}

func logit(p float64) float64 { return math.Log(p / (1 - p)) }

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func TestWeight(t *testing.T) {
	tests := []struct{ p, want float64 }{
		{0.8, math.Log(4)}, {0.5, 0}, {0.3, 0}, {0, 0}, {0.9, math.Log(9)},
		{1, math.Log(999)}, {0.9995, math.Log(999)},
	}
	for _, tt := range tests {
		if got := consensus.Weight(tt.p); !(math.Abs(got-tt.want) <= 1e-12) {
			t.Errorf("Weight(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
}

func TestTempering(t *testing.T) {
	tests := []struct {
		n    int
		rho  float64
		want float64
	}{
		{0, 0.5, 1}, {1, 0.5, 1}, {2, 0, 1}, {2, 0.5, 1 / 1.5}, {5, 0.25, 0.5}, {3, 0.1, 1 / 1.2},
		// ρ outside [0, 1] is clamped to it, NaN read as 1: a factor in [1/n, 1].
		{2, 1, 0.5}, {2, 3, 0.5}, {4, math.Inf(1), 0.25}, {2, -0.5, 1}, {3, -0.5, 1}, {3, -1, 1},
		{3, math.Inf(-1), 1}, {2, math.NaN(), 0.5}, {1, math.NaN(), 1},
	}
	for _, tt := range tests {
		if got := consensus.Tempering(tt.n, tt.rho); !(math.Abs(got-tt.want) <= 1e-12) {
			t.Errorf("Tempering(%d, %v) = %v, want %v", tt.n, tt.rho, got, tt.want)
		}
	}
}

func TestCredence(t *testing.T) {
	w8, w9 := logit(0.8), logit(0.9)
	tests := []struct {
		name   string
		scores []float64
		i      int
		temp   float64
		want   float64
	}{
		{"one vote reads its reliability", []float64{w9}, 0, 1, 0.9},
		{"two agreeing", []float64{2 * w8}, 0, 1, 0.64 / (0.64 + 0.04)},
		{"split of equals", []float64{w8, w8}, 0, 1, 0.5},
		{"reliable against unreliable", []float64{w9, w8}, 0, 1, sigmoid(w9 - w8)},
		{"the other side", []float64{w9, w8}, 1, 1, sigmoid(w8 - w9)},
		{"tempered", []float64{3 * w8}, 0, 0.5, sigmoid(1.5 * w8)},
		{"three answers", []float64{w9, w8, w8}, 0, 1, 9.0 / (9 + 4 + 4)},
		{"no score", []float64{}, 0, 1, 0},
		{"out of range", []float64{w8}, 1, 1, 0},
		{"huge scores stay finite", []float64{800, 790}, 0, 1, sigmoid(10)},
		{"very negative scores stay finite", []float64{-1000, -1010}, 0, 1, sigmoid(10)},
		{"very negative lone score", []float64{-1000}, 0, 1, 0},
		{"an infinite score is certain", []float64{math.Inf(1), 5}, 0, 1, 1},
		{"beside an infinite score", []float64{math.Inf(1), 5}, 1, 1, 0},
		{"two infinite scores split", []float64{math.Inf(1), math.Inf(1)}, 1, 1, 0.5},
		{"a lone infinite score", []float64{math.Inf(1)}, 0, 1, 1},
		{"a tempered score that overflows", []float64{1e308, 1}, 0, 10, 1},
		{"scores all -Inf split", []float64{math.Inf(-1), math.Inf(-1)}, 0, 1, 0.5},
		{"three scores all -Inf split", []float64{math.Inf(-1), math.Inf(-1), math.Inf(-1)}, 2, 1, 1.0 / 3},
		{"a lone -Inf score", []float64{math.Inf(-1)}, 0, 1, 0},
		{"a NaN score", []float64{math.NaN(), 1}, 0, 1, 0},
		{"beside a NaN score", []float64{math.NaN(), 1}, 1, 1, 0},
		{"a lone NaN score", []float64{math.NaN()}, 0, 1, 0},
		{"a NaN tempering", []float64{1, 2}, 1, math.NaN(), 0},
		{"an infinite score tempered by 0", []float64{math.Inf(1), 1}, 1, 0, 0},
	}
	for _, tt := range tests {
		if got := consensus.Credence(tt.scores, tt.i, tt.temp); !(math.Abs(got-tt.want) <= 1e-12) { // NaN fails
			t.Errorf("%s: Credence(%v, %d, %v) = %v, want %v", tt.name, tt.scores, tt.i, tt.temp, got, tt.want)
		}
	}
}

func TestWeightedAggregate(t *testing.T) {
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.95, 2: 0.7, 3: 0.7, 4: 0.6, 5: 0.9}}
	w := func(s int64) float64 { return consensus.Weight(rel.Of(s)) }
	tests := []struct {
		name        string
		votes       string
		rel         consensus.Reliabilities
		policy      consensus.Policy
		label       consensus.Label
		winner      int
		agreeing    int
		against     int
		confidence  float64
		lowConf     bool
		disagreeing bool
	}{
		{name: "one reliable voter outweighs two weak ones", votes: "VII", rel: rel,
			label: valid, winner: 0, agreeing: 1, against: 2,
			confidence: sigmoid(w(1) - w(2) - w(3)), lowConf: true, disagreeing: true},
		{name: "unanimous", votes: "VVV", rel: rel, label: valid, winner: 0, agreeing: 3,
			confidence: sigmoid(w(1) + w(2) + w(3))},
		{name: "unanimous, correlated", votes: "VVV", rel: consensus.Reliabilities{Sessions: rel.Sessions, Correlation: 0.5},
			label: valid, winner: 0, agreeing: 3, confidence: sigmoid((w(1) + w(2) + w(3)) / 2)},
		{name: "failures are non-votes", votes: "EVC", rel: rel, label: valid, winner: 1, agreeing: 1,
			confidence: 0.7, lowConf: true},
		{name: "failures as negative evidence", votes: "EVI", rel: rel,
			policy: consensus.Policy{Failures: consensus.FailuresNegative},
			label:  errLabel, winner: -1, lowConf: true, disagreeing: true},
		{name: "unknown sessions read the prior", votes: "VVI", rel: consensus.Reliabilities{Prior: 0.75},
			label: valid, winner: 0, agreeing: 2, against: 1,
			confidence: sigmoid(logit(0.75)), lowConf: true, disagreeing: true},
		{name: "tie goes to the cautious label", votes: "VI", rel: consensus.Reliabilities{},
			label: invalid, winner: 1, agreeing: 1, against: 1, confidence: 0.5, lowConf: true, disagreeing: true},
		{name: "nothing cast", votes: "EC", rel: rel, label: errLabel, winner: -1, lowConf: true},
	}
	for _, tt := range tests {
		out, err := consensus.Weighted{Reliabilities: tt.rel}.Aggregate(panel(tt.votes), tt.policy)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if out.Strategy != consensus.StrategyWeighted || out.Label != tt.label || out.Winner != tt.winner ||
			out.Agreeing != tt.agreeing || out.Against != tt.against || math.Abs(out.Confidence-tt.confidence) > 1e-12 ||
			out.LowConfidence != tt.lowConf || out.Disagreement != tt.disagreeing {
			t.Errorf("%s: got %s winner %d agreeing %d against %d confidence %v low %v disagreement %v;\n want %s %d %d %d %v %v %v",
				tt.name, out.Label, out.Winner, out.Agreeing, out.Against, out.Confidence, out.LowConfidence, out.Disagreement,
				tt.label, tt.winner, tt.agreeing, tt.against, tt.confidence, tt.lowConf, tt.disagreeing)
		}
	}
}

// TestWeightedRecompute recomputes a weighted outcome from what it
// records: each vote's label, answer and weight, and the correlation.
func TestWeightedRecompute(t *testing.T) {
	votes := []consensus.Vote{
		{Session: 1, Label: ok, Answer: json.RawMessage(`{"a":1}`)},
		{Session: 2, Label: ok, Answer: json.RawMessage(`{ "a" : 1 }`)},
		{Session: 3, Label: ok, Answer: json.RawMessage(`{"a":2}`)},
		{Session: 4, Label: errLabel},
	}
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.7, 2: 0.75, 3: 0.97}, Correlation: 0.2}
	out, err := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if out.Winner != 2 {
		t.Fatalf("winner %d, want the very reliable session's answer (2)", out.Winner)
	}
	want := []float64{logit(0.7), logit(0.75), logit(0.97), 0}
	if diff := cmp.Diff(want, out.Weights, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
	// From the record alone: scores of the two answers, tempering of 3 votes.
	scores := []float64{out.Weights[0] + out.Weights[1], out.Weights[2]}
	if got := consensus.Credence(scores, 1, consensus.Tempering(3, out.Correlation)); got != out.Confidence {
		t.Errorf("recomputed confidence %v, outcome says %v", got, out.Confidence)
	}
	if out.Agreement != 1.0/3 {
		t.Errorf("agreement %v, want 1/3", out.Agreement)
	}
}

// TestWeightedProperties checks, over random panels, that the confidence
// is a probability, that the weight of an unknown session equals the
// prior's, and that a unanimous panel of reliable sessions is more
// confident than one of unreliable sessions.
func TestWeightedProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 1))
	labels := "VIEC"
	for range 2000 {
		n := 1 + r.IntN(7)
		b := make([]byte, n)
		for i := range b {
			b[i] = labels[r.IntN(len(labels))]
		}
		rel := consensus.Reliabilities{Sessions: map[int64]float64{}, Correlation: r.Float64() * 0.99, Prior: r.Float64()}
		for s := int64(1); s <= int64(n); s++ {
			if r.IntN(3) > 0 {
				rel.Sessions[s] = r.Float64()
			}
		}
		for _, failures := range []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative} {
			out, err := consensus.Weighted{Reliabilities: rel}.Aggregate(panel(string(b)), consensus.Policy{Failures: failures})
			if err != nil {
				t.Fatal(err)
			}
			if !(out.Confidence >= 0 && out.Confidence <= 1) {
				t.Fatalf("%s under %+v: confidence %v outside [0, 1]", b, rel, out.Confidence)
			}
			for i, v := range panel(string(b)) {
				if _, known := rel.Sessions[v.Session]; !known && out.Weights[i] != 0 && out.Weights[i] != consensus.Weight(rel.Prior) {
					t.Fatalf("%s: unknown session %d weighs %v, want the prior's %v", b, v.Session, out.Weights[i], consensus.Weight(rel.Prior))
				}
			}
		}
		hi, lo := 0.55+0.44*r.Float64(), 0.5+0.05*r.Float64()
		all := func(p float64) consensus.Reliabilities {
			m := map[int64]float64{}
			for s := int64(1); s <= int64(n); s++ {
				m[s] = p
			}
			return consensus.Reliabilities{Sessions: m, Correlation: rel.Correlation}
		}
		unanimous := panel(string(make([]byte, n)))
		for i := range unanimous {
			unanimous[i].Label = valid
		}
		a, _ := consensus.Weighted{Reliabilities: all(hi)}.Aggregate(unanimous, consensus.Policy{})
		c, _ := consensus.Weighted{Reliabilities: all(lo)}.Aggregate(unanimous, consensus.Policy{})
		if hi > lo+1e-3 && a.Confidence <= c.Confidence {
			t.Fatalf("%d unanimous votes: reliability %v gives %v, not above %v's %v", n, hi, a.Confidence, lo, c.Confidence)
		}
	}
}

func TestWeightedDecided(t *testing.T) {
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.99, 2: 0.99, 3: 0.6, 4: 0.6, 5: 0.6}}
	tests := []struct {
		votes    string
		launched []int64
		want     bool
	}{
		{"VV...", []int64{1, 2, 3, 4, 5}, true},  // 2·4.6 beats 3·0.41
		{"VV...", nil, false},                    // unnamed replicas weigh the most
		{"..VVV", []int64{1, 2, 3, 4, 5}, false}, // the reliable two may still dissent
		{"VVVVV", nil, true},
		{"V....", []int64{1, 2, 3, 4, 5}, false},
	}
	for _, tt := range tests {
		if got := (consensus.Weighted{Reliabilities: rel, Launched: tt.launched}).Decided(panel(tt.votes), consensus.Policy{}); got != tt.want {
			t.Errorf("Decided(%s, launched %v) = %v, want %v", tt.votes, tt.launched, got, tt.want)
		}
	}
}

func TestBeliefs(t *testing.T) {
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.8, 2: 0.8, 3: 0.9}}
	got, groups, err := consensus.Beliefs(panel("VVIC"), consensus.Policy{}, rel)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 0, 1, -1}; !cmp.Equal(groups, want) {
		t.Errorf("groups %v, want %v", groups, want)
	}
	s := 2*logit(0.8) - logit(0.9)
	want := []float64{sigmoid(s), sigmoid(s), sigmoid(-s), 0}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); diff != "" {
		t.Errorf("Beliefs (-want +got):\n%s", diff)
	}
}

// TestStopWeighted: the stopping rule reads the weighted confidence.
func TestStopWeighted(t *testing.T) {
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.95, 2: 0.6, 3: 0.6, 4: 0.6}}
	agg := func(s string) consensus.Outcome {
		votes := panel(s)
		if len(s) > 1 { // sessions 2, 3, … : the weak ones
			for i := range votes {
				votes[i].Session++
			}
		}
		out, err := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	stop := consensus.Stop{Lone: 0.9, Weight: consensus.Weight(0.95)}
	if out := agg("V"); stop.Settled(out) || stop.Next(out) != 1 {
		t.Errorf("one vote of a 0.95 session, confidence %v: Settled %v, Next %d; want one more run (one weighted vote settles nothing)", out.Confidence, stop.Settled(out), stop.Next(out))
	}
	if got := stop.Next(consensus.Outcome{}); got != 1 {
		t.Errorf("Next before any vote, with Lone = %v: %d, want 1", stop.Lone, got)
	}
	if got := (consensus.Stop{Weight: consensus.Weight(0.95)}).Next(consensus.Outcome{}); got != 2 {
		t.Errorf("Next before any vote, weighted votes of 0.95: %d, want 2 (two agreeing reach the threshold)", got)
	}
	if out := agg("VV"); stop.Settled(out) {
		t.Errorf("two votes of 0.6 sessions (confidence %v) settle the call", out.Confidence)
	} else if got := stop.Next(out); got != 1 {
		t.Errorf("after two votes of 0.6 sessions, Next = %d, want 1 (one vote of weight %v would do)", got, stop.Weight)
	}
	if out := agg("VII"); stop.Settled(out) || !(out.Confidence < 0.8) {
		t.Errorf("a split panel (confidence %v) settles the call", out.Confidence)
	}
}

// TestConservative: a property: on any votes and reliabilities, the
// weighted outcome's conservative confidence is never above the
// Posterior of its winner's votes (what an unweighted count states for
// it), nor above its weighted confidence, and a majority outcome keeps
// its own.
func TestConservative(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	labels := []consensus.Label{consensus.LabelValid, consensus.LabelInvalid, consensus.Label("RETRY")}
	for trial := range 2000 {
		n := 1 + r.IntN(5)
		votes := make([]consensus.Vote, n)
		rel := consensus.Reliabilities{Sessions: map[int64]float64{}, Correlation: 0.5 * r.Float64()}
		for i := range votes {
			votes[i] = consensus.Vote{Session: int64(i + 1), Label: labels[r.IntN(len(labels))]}
			rel.Sessions[int64(i+1)] = r.Float64()
		}
		out, err := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		c := consensus.Conservative(out)
		if p := consensus.Posterior(out.Agreeing, out.Against); c > p || c > out.Confidence || c != min(p, out.Confidence) {
			t.Fatalf("trial %d: conservative %v, Posterior %v, weighted %v", trial, c, p, out.Confidence)
		}
		maj, err := consensus.Majority{}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		if consensus.Conservative(maj) != maj.Confidence {
			t.Fatalf("trial %d: a majority outcome's conservative confidence %v, its own %v", trial, consensus.Conservative(maj), maj.Confidence)
		}
	}
	if got := consensus.Conservative(consensus.Outcome{Winner: -1}); got != 0 {
		t.Errorf("no winner: %v, want 0", got)
	}
}
