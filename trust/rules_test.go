package trust

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vouchkit/vouch/trust/internal/decide"
)

// TestService_rules: a request's rules carry its tier (each Policy one
// of decide's tiers), its kind and the service's settings, and name the
// calibration maps as this package documents them
// (NumericCalibrationSuffix, LeaderCalibrationSuffix).
func TestService_rules(t *testing.T) {
	for p, tier := range map[Policy]decide.Tier{PolicyFast: decide.Fast, PolicySafe: decide.Safe, PolicyOracle: decide.Oracle, PolicyAdaptive: decide.Adaptive} {
		if got := (&Service{}).rules(&Request{Policy: p}).Tier; got != tier {
			t.Errorf("policy %q decides as tier %q, want %q", p, got, tier)
		}
	}
	s := &Service{threshold: 0.9, floor: 0.6}
	numeric := &Request{Mode: ModeDelegation, Policy: PolicyAdaptive, Task: Task{Answer: AnswerNumber}}
	want := decide.Rules{Tier: decide.Adaptive, Delegation: true, Numeric: true, Lone: 0.9,
		Threshold: DefaultWeightedStopThreshold, Flip: DefaultFlipBound, Floor: 0.6}
	if diff := cmp.Diff(want, s.rules(numeric)); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	if got, want := s.rules(numeric).CalibrationTier(""), "adaptive"+NumericCalibrationSuffix; got != want {
		t.Errorf("a numeric delegation's map is %q, want %q", got, want)
	}
	if decide.LeaderSuffix != LeaderCalibrationSuffix {
		t.Errorf("decide names a leader's maps with %q, trust documents %q", decide.LeaderSuffix, LeaderCalibrationSuffix)
	}
	judged := &Request{Mode: ModeDelegation, Policy: PolicySafe, Delegation: &DelegationOptions{Agreement: AgreementJudged}}
	if r := (&Service{}).rules(judged); !r.Judged || r.ByPlurality() || r.Open() || r.Floor != DefaultPluralityFloor || r.Tier != decide.Safe {
		t.Errorf("a judged safe delegation's rules %+v: want judged, not by plurality, not open, the default floor, tier safe", r)
	}
}
