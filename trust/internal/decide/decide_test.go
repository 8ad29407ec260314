package decide

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// votesOf returns one answered delegation vote per output, of sessions
// 1, 2, … in order.
func votesOf(outputs ...string) []consensus.Vote {
	votes := make([]consensus.Vote, len(outputs))
	for i, o := range outputs {
		votes[i] = consensus.Vote{Session: int64(i + 1), Label: "OK", Answer: json.RawMessage(o)}
	}
	return votes
}

// tallyOf counts outputs as the trust service does with reputation off,
// as a delegation.
func tallyOf(t *testing.T, outputs ...string) consensus.Outcome {
	t.Helper()
	out, err := consensus.Majority{}.Aggregate(votesOf(outputs...), consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// weightedOf counts outputs weighted by the reliabilities rel of their
// sessions, as the trust service does with reputation on.
func weightedOf(t *testing.T, rel map[int64]float64, outputs ...string) consensus.Outcome {
	t.Helper()
	out, err := consensus.Weighted{Reliabilities: consensus.Reliabilities{Sessions: rel}}.Aggregate(votesOf(outputs...), consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// adaptiveRules returns the rules of an adaptive delegation, or
// validation, with no setting but the default plurality floor.
func adaptiveRules(delegation bool) Rules {
	return Rules{Tier: Adaptive, Delegation: delegation, Floor: 0.5}
}

// calibratedRules returns the rules of an adaptive delegation with
// reputation on, at the default stop threshold of package trust.
func calibratedRules() Rules {
	r := adaptiveRules(true)
	r.Calibrated, r.Threshold = true, 0.97
	return r
}

// TestRules_Decides is the table of the status rule: an adaptive
// delegation is accepted when at least two runs back the winner and the
// stated confidence is above the floor, or when the stop settles one
// answer alone; every other call is decided by Accepts.
func TestRules_Decides(t *testing.T) {
	delegation, validation := adaptiveRules(true), adaptiveRules(false)
	judged := delegation
	judged.Judged = true
	safe := delegation
	safe.Tier = Safe
	higher := delegation
	higher.Floor = 0.9
	lone09 := delegation
	lone09.Lone = 0.9
	scattered := tallyOf(t, "1", "1", "2", "3", "4") // 2 of 5: Posterior 0.34
	majority := tallyOf(t, "1", "1", "1", "2", "3")  // 3 of 5: Posterior 0.66
	lone := tallyOf(t, "1")
	lone.Votes[0].Confidence = 0.95
	tied := tallyOf(t, "1", "1", "2", "2", "3")
	none := consensus.Outcome{Winner: -1}
	// Session 3 alone outweighs sessions 1 and 2, which agree.
	outweighed := weightedOf(t, map[int64]float64{1: 0.55, 2: 0.55, 3: 0.99}, "1", "1", "2")
	safeValidation := Rules{Tier: Safe, Calibrated: true}
	safeDelegation := safeValidation
	safeDelegation.Delegation = true
	safeOff := safeValidation
	safeOff.Calibrated = false
	adaptiveValidation := validation
	adaptiveValidation.Calibrated = true
	tests := []struct {
		name       string
		rules      Rules
		out        consensus.Outcome
		confidence float64
		want       bool
	}{
		{"a plurality of 2 of 5 above the floor", delegation, scattered, 0.51, true},
		{"a plurality of 2 of 5 at the floor", delegation, scattered, 0.5, false},
		{"a plurality of 2 of 5 below it", delegation, scattered, 0.34, false},
		{"a tie above the floor: the tally's winner", delegation, tied, 0.6, true},
		{"a majority below the floor", delegation, majority, 0.45, false},
		{"a majority above it", delegation, majority, 0.66, true},
		{"a floor set higher", higher, majority, 0.66, false},
		{"one answer, however confident the tally", delegation, lone, 0.99, false},
		{"one answer the escalation threshold settles", lone09, lone, 0.75, true},
		{"no winner", delegation, none, 0, false},
		{"validation keeps the strict majority", validation, scattered, 0.9, false},
		{"judged keeps the strict majority", judged, scattered, 0.9, false},
		{"safe keeps the strict majority", safe, scattered, 0.9, false},
		{"safe's majority of 3 of 5", safe, majority, 0.1, true},
		{"safe: one session outweighing two, calibrated above one half", safeValidation, outweighed, 0.62, true},
		{"safe delegation: the same", safeDelegation, outweighed, 0.62, true},
		{"safe: one session outweighing two, at one half", safeValidation, outweighed, 0.5, false},
		{"safe uncalibrated keeps the strict majority", safeOff, outweighed, 0.9, false},
		{"adaptive keeps its stop's rule", adaptiveValidation, outweighed, 0.9, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rules.Decides(tt.out, nil, tt.confidence); got != tt.want {
				t.Errorf("Decides = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRules_recount: an adaptive delegation weighted by reputation whose
// weights do not settle it is counted again by runs, the tie for the most
// runs kept by the weighted winner; a weighted tally that settles on its
// calibrated confidence, and every other call, keep their tally.
func TestRules_recount(t *testing.T) {
	calibrated := calibratedRules()
	validation := calibrated
	validation.Delegation = false
	safe := calibrated
	safe.Tier = Safe
	// Session 3 alone outweighs sessions 1 and 2, which agree.
	heavy := map[int64]float64{1: 0.55, 2: 0.55, 3: 0.99, 4: 0.55, 5: 0.55}
	even := map[int64]float64{1: 0.9, 2: 0.9, 3: 0.9, 4: 0.9, 5: 0.9}
	tests := []struct {
		name      string
		rules     Rules
		outputs   []string
		rel       map[int64]float64
		cal       *reputation.Calibration
		recounted bool
		winner    string
		agreeing  int
	}{
		{"one heavy session against two that agree", calibrated, []string{"16", "16", "13", "21", "14"}, heavy, nil, true, "16", 2},
		{"a tie for the most runs keeps the weighted winner", calibrated, []string{"16", "16", "13", "13", "14"}, map[int64]float64{1: 0.6, 2: 0.6, 3: 0.95, 4: 0.95, 5: 0.6}, nil, true, "13", 2},
		{"a weighted winner that is also the plurality, not settled", calibrated, []string{"7", "7", "8"}, even, nil, true, "7", 2},
		{"a weighted winner settled uncalibrated (5 of 5)", calibrated, []string{"7", "7", "7", "7", "7"}, even, nil, false, "7", 5},
		{"a weighted winner the calibration map settles", calibrated, []string{"7", "7"}, even, settling(t), false, "7", 2},
		{"validation is never recounted", validation, []string{"16", "16", "13", "21", "14"}, heavy, nil, false, "13", 1},
		{"safe is never recounted", safe, []string{"16", "16", "13"}, heavy, nil, false, "13", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := weightedOf(t, tt.rel, tt.outputs...)
			got, recounted, err := tt.rules.recount(out, nil, tt.cal, consensus.DefaultCoincidence, 0.7)
			if err != nil {
				t.Fatal(err)
			}
			if recounted != tt.recounted || got.Winner < 0 || tt.outputs[got.Winner] != tt.winner || got.Agreeing != tt.agreeing {
				t.Errorf("recounted %v, winner %d (%q) of %d runs; want %v, %q of %d", recounted, got.Winner, tt.outputs[max(got.Winner, 0)], got.Agreeing, tt.recounted, tt.winner, tt.agreeing)
			}
			groups, err := pluralityGroups(got, nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := consensus.PluralityPosteriorAt(groups, 0, consensus.DefaultCoincidence, 0.7); recounted && (got.Strategy != consensus.StrategyMajority || got.Confidence != want || groups[0] != got.Agreeing) {
				t.Errorf("recounted as %s stating %v (groups %v); want majority stating PluralityPosteriorAt, %v", got.Strategy, got.Confidence, groups, want)
			}
		})
	}
}

// settling returns a calibration map that has seen every call right.
func settling(t *testing.T) *reputation.Calibration {
	t.Helper()
	cal := &reputation.Calibration{Tier: string(Adaptive)}
	b := reputation.Bin(0.875)
	cal.Outcomes[b] = reputation.Record{Right: 400}
	cal.Scores[b] = reputation.Record{Right: 400 * 0.875, Wrong: 400 * 0.125}
	return cal
}

// TestNext: adaptive's stop, except that a delegation whose winner holds
// no strict majority of the answers runs once more while runs are left,
// and so does a validation whose tally the stop settles on the next
// session's weight but the tally's acceptance refuses.
func TestRules_Next(t *testing.T) {
	delegation, validation := adaptiveRules(true), adaptiveRules(false)
	// Sessions right 95%, 85%, 75% and 60% of the time vote V, I, I, V:
	// V leads 3.35 to 2.83, more than a fifth session right 52% of the
	// time weighs (0.08), less than one of the prior (1.39).
	rel := consensus.Reliabilities{Prior: 0.8, Sessions: map[int64]float64{1: 0.95, 2: 0.85, 3: 0.75, 4: 0.6}}
	var votes []consensus.Vote
	for i, l := range []consensus.Label{"VALID", "INVALID", "INVALID", "VALID"} {
		votes = append(votes, consensus.Vote{Session: int64(i + 1), Label: l})
	}
	tie, err := consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	to := func(y float64) func(float64, float64) float64 { return func(float64, float64) float64 { return y } }
	weak := consensus.Weight(0.52)
	// Max 4 makes a tie of 2 and 2 end the stop's runs; Max 5 leaves one.
	tests := []struct {
		name  string
		rules Rules
		st    consensus.Stop
		out   consensus.Outcome
		want  int
	}{
		{"a tie with a run left", delegation, consensus.Stop{Threshold: 0.5}, tallyOf(t, "1", "1", "2", "2"), 1},
		{"2 of 4 with a run left", delegation, consensus.Stop{Threshold: 0.5}, tallyOf(t, "1", "1", "2", "3"), 1},
		{"a tie with no run left", delegation, consensus.Stop{Threshold: 0.5, Max: 4}, tallyOf(t, "1", "1", "2", "2"), 0},
		{"a strict majority the stop settles", delegation, consensus.Stop{}, tallyOf(t, "1", "1"), 0},
		{"validation keeps the stop's count", validation, consensus.Stop{Threshold: 0.5}, tallyOf(t, "1", "1", "2", "2"), 0},
		{"a weighted tie accepted", validation, consensus.Stop{Threshold: 0.97, Flip: 0.2, Weight: weak, Calibrate: to(0.6)}, tie, 0},
		{"a weighted tie the tally would refuse", validation, consensus.Stop{Threshold: 0.97, Flip: 0.2, Weight: weak, Calibrate: to(0.4)}, tie, 1},
		{"a weighted tie refused with no run left", validation, consensus.Stop{Threshold: 0.97, Flip: 0.2, Weight: weak, Calibrate: to(0.4), Max: 4}, tie, 0},
		{"the stop's own count before settling", delegation, consensus.Stop{}, tallyOf(t, "1", "2"), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rules.Next(tt.st, tt.out); got != tt.want {
				t.Errorf("Next = %d, want %d", got, tt.want)
			}
		})
	}
}

// runsOf returns one answered delegation run per output, on sessions 1,
// 2, … in order, each recording its reliability in rel (none when rel is
// nil).
func runsOf(rel []float64, outputs ...string) []router.Run {
	runs := make([]router.Run, len(outputs))
	for i, o := range outputs {
		runs[i] = router.Run{Replica: i, SessionID: router.SessionID(i + 1), Label: router.LabelOK, Output: json.RawMessage(o)}
		if rel != nil {
			runs[i].Reliability = &rel[i]
		}
	}
	return runs
}

// TestRules_Decide: what a finished call states. With reputation off the
// majority's count and its own confidence, uncalibrated; with it on and
// no map read, an adaptive delegation the weights do not settle is
// counted again by runs and states its plurality's posterior, at the
// runs' mean reliability, on an uncalibrated basis named after its tier;
// a leader's verdict is accepted on its leader's basis.
func TestRules_Decide(t *testing.T) {
	calibrated := calibratedRules()
	leader := calibrated
	leader.Delegation = false
	heavy := []float64{0.55, 0.55, 0.99, 0.55, 0.55} // session 3 outweighs 1 and 2
	scattered := runsOf(heavy, "16", "16", "13", "21", "14")
	lone := []router.Run{{SessionID: 3, Label: router.Label(router.VerdictValid), Reliability: &heavy[2]}}
	alone, err := calibrated.Count(lone, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	majority := tallyOf(t, "7", "7", "8")
	open := &Maps{Calibrations: []*reputation.Calibration{{Tier: "adaptive"}}, Open: true, Coincide: 0.3}
	mean := (4*0.55 + 0.99) / 5
	tests := []struct {
		name   string
		rules  Rules
		maps   *Maps
		tally  Tally
		want   Decision
		reason string
	}{
		{
			"reputation off", Rules{Tier: Safe, Delegation: true}, nil,
			Tally{Runs: runsOf(nil, "7", "7", "8")},
			Decision{Out: majority, Confidence: majority.Confidence, Coincidence: consensus.DefaultCoincidence, Reliability: consensus.DefaultReliability, Accepted: true},
			"",
		},
		{
			"a scattered open answer, no map read", calibrated, nil,
			Tally{Runs: scattered},
			Decision{Recounted: true, Groups: []int{2, 1, 1, 1}, Coincidence: consensus.DefaultCoincidence, Reliability: mean},
			"adaptive",
		},
		{
			"a scattered open answer on a map of no outcome", calibrated, open,
			Tally{Runs: scattered},
			Decision{Recounted: true, Groups: []int{2, 1, 1, 1}, Coincidence: 0.3, Reliability: mean},
			"adaptive",
		},
		{
			"a leader's verdict", leader, nil,
			Tally{Runs: lone, Led: true},
			Decision{Out: alone, Confidence: consensus.Conservative(alone), Coincidence: consensus.DefaultCoincidence, Reliability: consensus.DefaultReliability, Accepted: true},
			"adaptive/VALID" + LeaderSuffix,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.rules.Decide(tt.maps, tt.tally)
			if err != nil {
				t.Fatal(err)
			}
			if tt.reason == "" {
				if got.Basis != nil {
					t.Errorf("basis %+v, want none", got.Basis)
				}
			} else if got.Basis == nil || got.Basis.Tier != tt.reason || got.Basis.Basis != reputation.BasisUncalibrated || got.Confidence != got.Basis.Conservative {
				t.Fatalf("basis %+v stating %v, want the uncalibrated basis of %q stating its conservative number", got.Basis, got.Confidence, tt.reason)
			}
			if tt.want.Recounted {
				// The posterior of the groups, at the coincidence read.
				tt.want.Out = got.Out
				tt.want.Confidence = consensus.PluralityPosteriorAt(tt.want.Groups, 0, tt.want.Coincidence, tt.want.Reliability)
				tt.want.Accepted = tt.want.Confidence > tt.rules.Floor
				if got.Out.Strategy != consensus.StrategyMajority || got.Out.Agreeing != 2 || string(tt.tally.Runs[got.Out.Winner].Output) != "16" {
					t.Errorf("recounted to %s, winner %d of %d runs; want the majority's 16, of 2", got.Out.Strategy, got.Out.Winner, got.Out.Agreeing)
				}
			}
			got.Basis = nil
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}
