package main

import (
	"context"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// The judge passes no summary of an input it cannot read as text: an
// object input has no figures it could check, and a VALID verdict on it
// would pass any claim.
func TestKeepsFigures_nonTextInput(t *testing.T) {
	input, err := router.NewObjectInput(map[string]string{"text": "Refunds within 30 days, at most 2 a year."})
	if err != nil {
		t.Fatal(err)
	}
	res, err := keepsFigures(context.Background(), &router.Job{TaskInput: input, Claim: &router.Claim{Output: []byte(`"Refunds within 30 days."`)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == router.VerdictValid {
		t.Errorf("keepsFigures(an object input) = %s %v, want no VALID verdict", res.Verdict, res.Reasons)
	}
}

// A job without a claim (a delegation) is not a summary to judge.
func TestKeepsFigures_noClaim(t *testing.T) {
	res, err := keepsFigures(context.Background(), &router.Job{TaskInput: router.NewStringInput("Refunds within 30 days.")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == router.VerdictValid {
		t.Errorf("keepsFigures(no claim) = %s %v, want no VALID verdict", res.Verdict, res.Reasons)
	}
}
