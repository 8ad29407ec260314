package decide

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// verdictRuns returns one run per verdict, of sessions 1, 2, … in
// order, each of reliability rel ("" is a failed run).
func verdictRuns(rel float64, verdicts ...router.Verdict) []router.Run {
	runs := make([]router.Run, len(verdicts))
	for i, v := range verdicts {
		runs[i] = router.Run{Replica: i, SessionID: router.SessionID(i + 1), Label: router.Label(v), Reliability: &rel}
		if v == "" {
			runs[i].Label = router.LabelError
		}
	}
	return runs
}

// TestRules_Dissent is the table of the dissent rule: an adaptive
// validation with reputation on answers one session's verdict against
// four or more that agree, when its record against the others shows it
// right in more than half of such disagreements with a chance of at
// least 0.8; and nothing else.
func TestRules_Dissent(t *testing.T) {
	valid, invalid := router.VerdictValid, router.VerdictInvalid
	rules := Rules{Tier: Adaptive, Calibrated: true, Threshold: 0.97}
	strong := reputation.Lead{Session: 5, Won: 6, Lost: 1} // Beats: P(Bin(8, 1/2) ≤ 6) = 247/256
	records := []reputation.Lead{{Session: 1, Won: 1, Lost: 9}, strong}
	fourToOne := verdictRuns(0.8, valid, valid, valid, valid, invalid)
	tests := []struct {
		name  string
		rules Rules
		runs  []router.Run
		recs  []reputation.Lead
		want  bool
	}{
		{"four against a strong record", rules, fourToOne, records, true},
		{"the lone one first", rules, verdictRuns(0.8, invalid, valid, valid, valid, valid), []reputation.Lead{{Session: 1, Won: 6, Lost: 1}}, true},
		{"a failed run besides", rules, append(verdictRuns(0.8, valid, valid, valid, valid, invalid), verdictRuns(0.8, "")...), records, true},
		{"three against", rules, verdictRuns(0.8, valid, valid, valid, invalid), []reputation.Lead{{Session: 4, Won: 6, Lost: 1}}, false},
		{"two on each side", rules, verdictRuns(0.8, valid, valid, valid, invalid, invalid), []reputation.Lead{{Session: 4, Won: 6, Lost: 1}, strong}, false},
		{"a record at 0.77 (four in six)", rules, fourToOne, []reputation.Lead{{Session: 5, Won: 4, Lost: 2}}, false},
		{"no record of the session", rules, fourToOne, []reputation.Lead{{Session: 1, Won: 6, Lost: 1}}, false},
		{"no record at all", rules, fourToOne, nil, false},
		{"reputation off", Rules{Tier: Adaptive}, fourToOne, records, false},
		{"safe", Rules{Tier: Safe, Calibrated: true}, fourToOne, records, false},
		{"a delegation", Rules{Tier: Adaptive, Delegation: true, Calibrated: true}, fourToOne, records, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.rules.Count(tc.runs, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			i, lead, ok := tc.rules.Dissent(out, tc.recs)
			if ok != tc.want {
				t.Fatalf("Dissent = %d, %+v, %v; want %v", i, lead, ok, tc.want)
			}
			if !ok {
				return
			}
			if s := out.Votes[i].Session; lead.Session != s || !slices.Contains(tc.recs, lead) {
				t.Errorf("Dissent names vote %d (session %d) with the record %+v", i, s, lead)
			}
		})
	}
}

// TestRules_Decide_dissent checks what Decide states when the dissent
// rule decides: the lone verdict, accepted, at its record's Rate with no
// calibration basis, the tally's counts of it; and that a leader's call
// and a call of no record are decided as before.
func TestRules_Decide_dissent(t *testing.T) {
	rules := Rules{Tier: Adaptive, Calibrated: true, Threshold: 0.97}
	strong := reputation.Lead{Session: 5, Won: 6, Lost: 1}
	runs := verdictRuns(0.8, router.VerdictValid, router.VerdictValid, router.VerdictValid, router.VerdictValid, router.VerdictInvalid)
	maps := &Maps{
		Labels:       []consensus.Label{consensus.LabelValid, consensus.LabelInvalid},
		Calibrations: []*reputation.Calibration{{Tier: "adaptive/VALID"}, {Tier: "adaptive/INVALID"}},
		Records:      []reputation.Lead{strong},
	}
	d, err := rules.Decide(maps, Tally{Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	got := struct {
		Label                     consensus.Label
		Winner, Agreeing, Against int
		Agreement, Confidence     float64
		Accepted, Low, Calibrated bool
		Dissent                   *reputation.Lead
	}{d.Out.Label, d.Out.Winner, d.Out.Agreeing, d.Out.Against, d.Out.Agreement, d.Confidence, d.Accepted, d.Out.LowConfidence, d.Basis != nil, d.Dissent}
	want := got
	want.Label, want.Winner, want.Agreeing, want.Against = consensus.LabelInvalid, 4, 1, 4
	want.Agreement, want.Confidence, want.Accepted, want.Low, want.Calibrated, want.Dissent = 0.2, 7.0/9, true, true, false, &strong
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the dissent rule's decision (-want +got):\n%s", diff)
	}

	before := maps.Records
	maps.Records = nil
	plain, err := rules.Decide(maps, Tally{Runs: runs})
	if err != nil {
		t.Fatal(err)
	}
	if plain.Dissent != nil || plain.Out.Label != consensus.LabelValid {
		t.Errorf("no record: decided %s, dissent %+v; want VALID, none", plain.Out.Label, plain.Dissent)
	}
	maps.Records = before
	led, err := rules.Decide(maps, Tally{Runs: runs[4:], Led: true})
	if err != nil {
		t.Fatal(err)
	}
	if led.Dissent != nil || !led.Accepted || led.Basis == nil {
		t.Errorf("a leader's call: dissent %+v, accepted %v, basis %v; want no dissent, accepted on its map", led.Dissent, led.Accepted, led.Basis)
	}
}
