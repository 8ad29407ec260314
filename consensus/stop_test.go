package consensus_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

func TestPosterior(t *testing.T) {
	tests := []struct {
		agreeing, against int
		want              float64
	}{
		{0, 0, 1.0 / 2}, {1, 0, 3.0 / 4}, {2, 0, 7.0 / 8}, {3, 0, 15.0 / 16}, {5, 0, 63.0 / 64},
		{1, 1, 1.0 / 2}, {2, 1, 11.0 / 16}, {3, 1, 13.0 / 16}, {4, 1, 57.0 / 64}, {3, 2, 21.0 / 32},
		{2, 2, 1.0 / 2}, {1, 2, 5.0 / 16}, {-1, 0, 1.0 / 2},
	}
	for _, tt := range tests {
		if got := consensus.Posterior(tt.agreeing, tt.against); got != tt.want {
			t.Errorf("Posterior(%d, %d) = %v, want %v", tt.agreeing, tt.against, got, tt.want)
		}
	}
	// Large counts take the floating-point path: symmetric, and near the
	// exact path where the two meet.
	if got := consensus.Posterior(40, 40); got < 0.5 || got > 0.55 {
		t.Errorf("Posterior(40, 40) = %v, want a little above 1/2", got)
	}
	if got := consensus.Posterior(100, 0); got < 1-1e-12 || got > 1 {
		t.Errorf("Posterior(100, 0) = %v, want 1 within 1e-12", got)
	}
}

// tallyOf aggregates a compact tally: "V" valid, "I" invalid, "E" error,
// "C" cancelled; conf is the first vote's reported confidence.
func tallyOf(t *testing.T, s string, conf float64) consensus.Outcome {
	t.Helper()
	if s == "" {
		return consensus.Outcome{}
	}
	vs := make([]consensus.Vote, len(s))
	for i, c := range s {
		vs[i].Label = map[rune]consensus.Label{'V': valid, 'I': invalid, 'E': errLabel, 'C': cancelled}[c]
	}
	vs[0].Confidence = conf
	out, err := consensus.Majority{}.Aggregate(vs, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStop covers every tally of up to 5 votes of VALID, INVALID and
// ERROR, up to which answer leads (order does not matter to the rule),
// and some with cancelled runs.
func TestStop(t *testing.T) {
	tests := []struct {
		votes  string
		next   int  // runs to launch next
		accept bool // may report its winner if it stopped here
	}{
		{"", 2, false},
		{"V", 1, false},
		{"E", 2, false},
		{"VV", 0, true},
		{"VI", 2, false},
		{"VE", 1, false},
		{"EE", 2, false},
		{"VVI", 1, true}, // 2 of 3: a strict majority, but 11/16 < 0.8
		{"VVE", 0, true},
		{"VIE", 2, false},
		{"VEE", 1, false},
		{"EEE", 2, false},
		{"VVVI", 0, true}, // 13/16
		{"VVII", 1, false},
		{"VVIE", 1, true},
		{"VVEE", 0, true},
		{"VIEE", 1, false},
		{"VEEE", 1, false},
		{"EEEE", 1, false},
		{"VVVII", 0, true}, // at the cap: 3 of 5 is a strict majority
		{"VVVVI", 0, true},
		{"VVIIE", 0, false}, // a tie at the cap: no verdict
		{"VIEEE", 0, false}, // one answer alone at the cap: no verdict
		{"VEEEE", 0, false},
		{"EEEEE", 0, false},
		{"VVCCC", 0, true}, // cancelled replicas count only against the cap
		{"VCCCC", 0, false},
		{"VVVVV", 0, true},
		{"VVV", 0, true},
		{"VVVV", 0, true},
		{"VVVE", 0, true},
		{"VVVVE", 0, true},
		{"VVVIE", 0, true},
		{"VVIEE", 0, true}, // at the cap: 2 of 3 answers is a strict majority of two
		{"VVEEE", 0, true},
		{"VVVEE", 0, true},
		{"IIV", 1, true}, // the same rule whichever answer leads
		{"IVIVI", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.votes, func(t *testing.T) {
			out := tallyOf(t, tt.votes, 0.99)
			var s consensus.Stop
			if got := s.Next(out); got != tt.next {
				t.Errorf("Next = %d, want %d", got, tt.next)
			}
			if got := s.Accept(out); got != tt.accept {
				t.Errorf("Accept = %t, want %t", got, tt.accept)
			}
			if s.Settled(out) != (tt.next == 0 && tt.accept && len(strings.Trim(tt.votes, "C")) > 0 && consensus.Posterior(out.Agreeing, out.Against) >= consensus.DefaultStopThreshold) {
				t.Errorf("Settled = %t, against its definition", s.Settled(out))
			}
		})
	}
}

// TestStop_lone shows the lone-vote rule: one answer settles the call
// only when its own confidence reaches Lone, and only with nothing
// against it.
func TestStop_lone(t *testing.T) {
	s := consensus.Stop{Lone: 0.95}
	tests := []struct {
		votes string
		conf  float64
		next  int
	}{
		{"", 0, 1},
		{"V", 0.95, 0},
		{"V", 0.94, 1},
		{"E", 0, 1},
		{"VE", 0.99, 0}, // the failure is no vote
		{"VI", 0.99, 2},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%v", tt.votes, tt.conf), func(t *testing.T) {
			if got := s.Next(tallyOf(t, tt.votes, tt.conf)); got != tt.next {
				t.Errorf("Next = %d, want %d", got, tt.next)
			}
		})
	}
}

// TestStop_sequential plays the rule against random panels: it never
// launches more than 5 runs, and its verdict depends only on every vote
// collected (the same multiset of votes in any order gives the same
// answer).
func TestStop_sequential(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	labels := []consensus.Label{valid, invalid, errLabel}
	for range 2000 {
		stop := consensus.Stop{Lone: []float64{0, 0.9}[rng.IntN(2)]}
		var vs []consensus.Vote
		out := consensus.Outcome{}
		for {
			k := stop.Next(out)
			if k == 0 {
				break
			}
			for range k {
				vs = append(vs, consensus.Vote{Label: labels[rng.IntN(3)], Confidence: rng.Float64()})
			}
			var err error
			if out, err = (consensus.Majority{}).Aggregate(vs, consensus.Policy{}); err != nil {
				t.Fatal(err)
			}
		}
		if len(vs) > consensus.DefaultMaxRuns || len(vs) == 0 {
			t.Fatalf("launched %d runs", len(vs))
		}
		shuffled := append([]consensus.Vote(nil), vs...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again, err := consensus.Majority{}.Aggregate(shuffled, consensus.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		accepted := stop.Accept(out)
		if stop.Lone == 0 && accepted != stop.Accept(again) {
			t.Fatalf("votes %v: Accept %t, but %t in another order", out.Verdicts, accepted, !accepted)
		}
		if accepted && (again.Label != out.Label || again.Agreeing != out.Agreeing || again.Against != out.Against) {
			t.Fatalf("votes %v: winner %s (%d-%d), but %s (%d-%d) in another order",
				out.Verdicts, out.Label, out.Agreeing, out.Against, again.Label, again.Agreeing, again.Against)
		}
		if accepted && out.Agreeing < 2 && !(stop.Lone > 0 && len(vs) >= 1) {
			t.Fatalf("votes %v: accepted one answer alone", out.Verdicts)
		}
	}
}

// weightedOf aggregates a compact tally ("V" valid, "I" invalid) as
// consensus.Weighted does, every session of reliability 0.8.
func weightedOf(t *testing.T, s string) consensus.Outcome {
	t.Helper()
	if s == "" {
		return consensus.Outcome{}
	}
	vs := make([]consensus.Vote, len(s))
	for i, c := range s {
		vs[i] = consensus.Vote{Session: int64(i + 1), Label: map[rune]consensus.Label{'V': valid, 'I': invalid}[c]}
	}
	out, err := consensus.Weighted{Reliabilities: consensus.Reliabilities{Prior: 0.8}}.Aggregate(vs, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStop_flip: the flip rule settles a weighted call once the runs left
// are unlikely to turn its verdict, under the calibrated confidence when
// there is one. Every vote weighs w = Weight(0.8) (p = 0.8).
func TestStop_flip(t *testing.T) {
	w := consensus.Weight(0.8)
	to := func(y float64) func(float64, float64) float64 { return func(float64, float64) float64 { return y } }
	// Read on the confidence, VV states 16/17 ≈ 0.941; on the
	// conservative number, Posterior(2, 0) = 0.875.
	confidence := func(x, _ float64) float64 { return x }
	conservative := func(_, c float64) float64 { return c }
	tests := []struct {
		name    string
		stop    consensus.Stop
		votes   string
		settled bool
		next    int
	}{
		// VV, 3 left, all 3 must dissent: c = 16/17,
		// 16/17·0.2³ + 1/17·0.8³ ≈ 0.038 < 0.05.
		{"two agree", consensus.Stop{Threshold: 0.97, Flip: 0.05, Weight: w}, "VV", true, 0},
		// Calibrated to 0.7: 0.7·0.008 + 0.3·0.512 ≈ 0.16; a third
		// agreeing vote leaves 2 runs that cannot outweigh 3.
		{"two agree, calibrated low", consensus.Stop{Threshold: 0.97, Flip: 0.05, Weight: w, Calibrate: to(0.7)}, "VV", false, 1},
		// Without the rule 16/17 < 0.97; a third agreeing vote gives
		// 64/65.
		{"no flip rule", consensus.Stop{Threshold: 0.97, Weight: w}, "VV", false, 1},
		// One vote never settles.
		{"one vote", consensus.Stop{Threshold: 0.97, Flip: 0.05, Weight: w}, "V", false, 1},
		// A split: one agreeing vote settles nothing; VVI does not
		// settle (below), VVVI does.
		{"split", consensus.Stop{Threshold: 0.97, Flip: 0.05, Weight: w}, "VI", false, 2},
		// VVI, 2 left, both must dissent: c = 0.8, 0.8·0.04 + 0.2·0.64 =
		// 0.16; one more agreeing vote settles it (VVVI: 1 left, no turn).
		{"two of three", consensus.Stop{Threshold: 0.97, Flip: 0.05, Weight: w}, "VVI", false, 1},
		{"three of four", consensus.Stop{Threshold: 0.97, Flip: 0.05, Weight: w}, "VVVI", true, 0},
		// The clear answer still settles: calibrated above the threshold.
		{"calibrated clear", consensus.Stop{Threshold: 0.9, Weight: w, Calibrate: to(0.95)}, "VV", true, 0},
		// Calibrate is handed the weighted confidence and the
		// conservative number: a map reading the first settles at 0.9,
		// one reading the second needs a third agreeing vote
		// (Posterior(3, 0) ≈ 0.94).
		{"calibrated on the confidence", consensus.Stop{Threshold: 0.9, Weight: w, Calibrate: confidence}, "VV", true, 0},
		{"calibrated on the conservative number", consensus.Stop{Threshold: 0.9, Weight: w, Calibrate: conservative}, "VV", false, 1},
		// Before any run: two agreeing runs could settle it.
		{"start", consensus.Stop{Threshold: 0.97, Flip: 0.05, Weight: w}, "", false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := weightedOf(t, tt.votes)
			if got := tt.stop.Settled(out); got != tt.settled {
				t.Errorf("Settled(%s) = %t, want %t", tt.votes, got, tt.settled)
			}
			if got := tt.stop.Next(out); got != tt.next {
				t.Errorf("Next(%s) = %d, want %d", tt.votes, got, tt.next)
			}
		})
	}
}

// TestStop_acceptWeighted: once a call stops, a weighted winner that
// holds no strict majority of the votes is reported when at least two
// votes back it and its confidence (calibrated when Calibrate is set) is
// above one half; a strict majority of two votes or more is reported as
// before, and one vote never.
func TestStop_acceptWeighted(t *testing.T) {
	to := func(y float64) func(float64, float64) float64 { return func(float64, float64) float64 { return y } }
	// Sessions 1 and 2 are right 95% of the time, 3 to 5 60%: VVII and
	// VVIII are won by V.
	strong := consensus.Reliabilities{Prior: 0.6, Sessions: map[int64]float64{1: 0.95, 2: 0.95}}
	even := consensus.Reliabilities{Prior: 0.6}
	// Session 1 right 99% of the time outweighs four at 55%.
	lone := consensus.Reliabilities{Prior: 0.55, Sessions: map[int64]float64{1: 0.99}}
	tests := []struct {
		name   string
		rel    consensus.Reliabilities
		votes  string
		cal    func(float64, float64) float64
		winner consensus.Label
		accept bool
	}{
		{"a tie, uncalibrated", strong, "VVII", nil, valid, true},
		{"a tie, calibrated above one half", strong, "VVII", to(0.6), valid, true},
		{"two of five, calibrated above one half", strong, "VVIII", to(0.6), valid, true},
		{"two of five, calibrated to one half", strong, "VVIII", to(0.5), valid, false},
		{"two of five, calibrated below one half", strong, "VVIII", to(0.4), valid, false},
		{"a majority, calibrated below one half", even, "VVVII", to(0.4), valid, true},
		{"one vote never", lone, "VIIII", to(0.9), valid, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := make([]consensus.Vote, len(tt.votes))
			for i, c := range tt.votes {
				vs[i] = consensus.Vote{Session: int64(i + 1), Label: map[rune]consensus.Label{'V': valid, 'I': invalid}[c]}
			}
			out, err := consensus.Weighted{Reliabilities: tt.rel}.Aggregate(vs, consensus.Policy{})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Votes[out.Winner].Label; got != tt.winner {
				t.Fatalf("winner %s, want %s", got, tt.winner)
			}
			s := consensus.Stop{Threshold: 0.999, Max: len(tt.votes), Calibrate: tt.cal}
			if s.Settled(out) {
				t.Fatalf("settled: the case is not one of Accept's")
			}
			if got := s.Accept(out); got != tt.accept {
				t.Errorf("Accept = %t, want %t", got, tt.accept)
			}
		})
	}
}

// TestStop_lowThreshold shows that a Threshold at or below Posterior(1, 0)
// = 3/4 does not let one answer settle a call: only Lone does, and a
// call of no Lone plans two runs to start.
func TestStop_lowThreshold(t *testing.T) {
	tests := []struct {
		stop    consensus.Stop
		votes   string
		conf    float64
		settled bool
		next    int
	}{
		{consensus.Stop{Threshold: 0.7}, "", 0, false, 2},
		{consensus.Stop{Threshold: 0.7}, "V", 0.99, false, 1},
		{consensus.Stop{Threshold: 0.75}, "V", 0.99, false, 1},
		{consensus.Stop{Threshold: 0.7}, "VE", 0.99, false, 1},
		{consensus.Stop{Threshold: 0.5}, "VI", 0.99, false, 1},
		{consensus.Stop{Threshold: 0.7}, "VV", 0, true, 0},
		{consensus.Stop{Threshold: 0.5}, "VVI", 0, true, 0},
		{consensus.Stop{Threshold: 0.7, Lone: 0.9}, "", 0, false, 1},
		{consensus.Stop{Threshold: 0.7, Lone: 0.9}, "V", 0.95, true, 0},
		{consensus.Stop{Threshold: 0.7, Lone: 0.9}, "V", 0.5, false, 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v/%v/%s/%v", tt.stop.Threshold, tt.stop.Lone, tt.votes, tt.conf), func(t *testing.T) {
			out := tallyOf(t, tt.votes, tt.conf)
			if got := tt.stop.Settled(out); got != tt.settled {
				t.Errorf("Settled = %v, want %v", got, tt.settled)
			}
			if got := tt.stop.Accept(out); got != tt.settled {
				t.Errorf("Accept = %v, want %v", got, tt.settled)
			}
			if got := tt.stop.Next(out); got != tt.next {
				t.Errorf("Next = %d, want %d", got, tt.next)
			}
		})
	}
}

// TestStop_largeMax shows that a Max beyond 100 is taken as 100, so that
// Next, which weighs every count of further runs against the runs left,
// returns for any Max: every run left when no count could settle the
// call, else what a Max of 100 gives.
func TestStop_largeMax(t *testing.T) {
	vi := weightedOf(t, "VI")
	for _, max := range []int{101, 1 << 20, math.MaxInt} {
		s := consensus.Stop{Threshold: 2, Max: max}
		if got := s.Next(consensus.Outcome{}); got != 100 {
			t.Errorf("%+v: Next before any run = %d, want 100", s, got)
		}
		if got := s.Next(vi); got != 98 {
			t.Errorf("%+v: Next after 2 runs = %d, want 98", s, got)
		}
		s = consensus.Stop{Threshold: 2, Weight: 0.1, Flip: 1e-9, Max: max}
		hundred := s
		hundred.Max = 100
		for _, out := range []consensus.Outcome{{}, vi} {
			if got, want := s.Next(out), hundred.Next(out); got != want || got < 1 {
				t.Errorf("%+v: Next after %d runs = %d, want %d", s, out.Replicas, got, want)
			}
		}
	}
}
