package trust

import (
	"encoding/json"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// runsOf returns one answered delegation run per output, on sessions 1,
// 2, … in order.
func runsOf(outputs ...string) []router.Run {
	runs := make([]router.Run, len(outputs))
	for i, o := range outputs {
		runs[i] = router.Run{Replica: i, SessionID: router.SessionID(i + 1), Label: router.LabelOK, Output: json.RawMessage(o)}
	}
	return runs
}

// tallyOf counts outputs as the trust service does with reputation off,
// as a delegation.
func tallyOf(t *testing.T, outputs ...string) consensus.Outcome {
	t.Helper()
	out, err := count(consensus.Majority{}, &Request{Mode: ModeDelegation}, runsOf(outputs...), nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestService_decides is the table of the status rule: an adaptive
// delegation answers VALID when at least two runs back the winner and the
// stated confidence is above the floor (DefaultPluralityFloor unless
// set), or when the stop settles one answer alone; every other call is
// decided by accepts, as before.
func TestService_decides(t *testing.T) {
	delegation := &Request{Mode: ModeDelegation, Policy: PolicyAdaptive}
	validation := &Request{Mode: ModeValidation, Policy: PolicyAdaptive}
	judged := &Request{Mode: ModeDelegation, Policy: PolicyAdaptive, Delegation: &DelegationOptions{Agreement: AgreementJudged}}
	safe := &Request{Mode: ModeDelegation, Policy: PolicySafe}
	scattered := tallyOf(t, "1", "1", "2", "3", "4") // 2 of 5: Posterior 0.34
	majority := tallyOf(t, "1", "1", "1", "2", "3")  // 3 of 5: Posterior 0.66
	lone := tallyOf(t, "1")
	lone.Votes[0].Confidence = 0.95
	tied := tallyOf(t, "1", "1", "2", "2", "3")
	none := consensus.Outcome{Winner: -1}
	tests := []struct {
		name       string
		s          *Service
		req        *Request
		out        consensus.Outcome
		confidence float64
		want       bool
	}{
		{"a plurality of 2 of 5 above the floor", &Service{}, delegation, scattered, 0.51, true},
		{"a plurality of 2 of 5 at the floor", &Service{}, delegation, scattered, 0.5, false},
		{"a plurality of 2 of 5 below it", &Service{}, delegation, scattered, 0.34, false},
		{"a tie above the floor: the tally's winner", &Service{}, delegation, tied, 0.6, true},
		{"a majority below the floor", &Service{}, delegation, majority, 0.45, false},
		{"a majority above it", &Service{}, delegation, majority, 0.66, true},
		{"a floor set higher", &Service{floor: 0.9}, delegation, majority, 0.66, false},
		{"one answer, however confident the tally", &Service{}, delegation, lone, 0.99, false},
		{"one answer the escalation threshold settles", &Service{threshold: 0.9}, delegation, lone, 0.75, true},
		{"no winner", &Service{}, delegation, none, 0, false},
		{"validation keeps the strict majority", &Service{}, validation, scattered, 0.9, false},
		{"judged keeps the strict majority", &Service{}, judged, scattered, 0.9, false},
		{"safe keeps the strict majority", &Service{}, safe, scattered, 0.9, false},
		{"safe's majority of 3 of 5", &Service{}, safe, majority, 0.1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.s.decides(tt.req, tt.out, nil, tt.confidence); got != tt.want {
				t.Errorf("decides = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRecount: an adaptive delegation weighted by reputation whose
// weights do not settle it is counted again by runs, the tie for the most
// runs kept by the weighted winner; a weighted tally that settles on its
// calibrated confidence, and every other call, keep their tally.
func TestRecount(t *testing.T) {
	delegation := &Request{Mode: ModeDelegation, Policy: PolicyAdaptive}
	weighted := func(outputs []string, rel map[int64]float64) consensus.Outcome {
		t.Helper()
		out, err := count(consensus.Weighted{Reliabilities: consensus.Reliabilities{Sessions: rel}}, delegation, runsOf(outputs...), nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	// Session 3 alone outweighs sessions 1 and 2, which agree.
	heavy := map[int64]float64{1: 0.55, 2: 0.55, 3: 0.99, 4: 0.55, 5: 0.55}
	even := map[int64]float64{1: 0.9, 2: 0.9, 3: 0.9, 4: 0.9, 5: 0.9}
	tests := []struct {
		name      string
		req       *Request
		outputs   []string
		rel       map[int64]float64
		cal       *reputation.Calibration
		recounted bool
		winner    string
		agreeing  int
	}{
		{"one heavy session against two that agree", delegation, []string{"16", "16", "13", "21", "14"}, heavy, nil, true, "16", 2},
		{"a tie for the most runs keeps the weighted winner", delegation, []string{"16", "16", "13", "13", "14"}, map[int64]float64{1: 0.6, 2: 0.6, 3: 0.95, 4: 0.95, 5: 0.6}, nil, true, "13", 2},
		{"a weighted winner that is also the plurality, not settled", delegation, []string{"7", "7", "8"}, even, nil, true, "7", 2},
		{"a weighted winner settled uncalibrated (5 of 5)", delegation, []string{"7", "7", "7", "7", "7"}, even, nil, false, "7", 5},
		{"a weighted winner the calibration map settles", delegation, []string{"7", "7"}, even, settling(t), false, "7", 2},
		{"validation is never recounted", &Request{Mode: ModeValidation, Policy: PolicyAdaptive}, []string{"16", "16", "13", "21", "14"}, heavy, nil, false, "13", 1},
		{"safe is never recounted", &Request{Mode: ModeDelegation, Policy: PolicySafe}, []string{"16", "16", "13"}, heavy, nil, false, "13", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := weighted(tt.outputs, tt.rel)
			got, recounted, err := recount(tt.req, out, runsOf(tt.outputs...), nil, tt.cal, consensus.DefaultCoincidence, 0.7)
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
	cal := &reputation.Calibration{Tier: string(PolicyAdaptive)}
	b := reputation.Bin(0.875)
	cal.Outcomes[b] = reputation.Record{Right: 400}
	cal.Scores[b] = reputation.Record{Right: 400 * 0.875, Wrong: 400 * 0.125}
	return cal
}

// TestNext: adaptive's stop, except that a delegation whose winner holds
// no strict majority of the answers runs once more while runs are left,
// and so does a validation whose tally the stop settles on the next
// session's weight but the tally's acceptance refuses.
func TestNext(t *testing.T) {
	delegation := &Request{Mode: ModeDelegation, Policy: PolicyAdaptive}
	validation := &Request{Mode: ModeValidation, Policy: PolicyAdaptive}
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
		name string
		req  *Request
		st   consensus.Stop
		out  consensus.Outcome
		want int
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
			if got := next(tt.req, tt.st, tt.out); got != tt.want {
				t.Errorf("next = %d, want %d", got, tt.want)
			}
		})
	}
}
