package router

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestOutcomeSettle_timeoutNamesTheBudget: a run that timed out names its
// budget, though its deadline was set a moment after the run began (the
// consensus runner sets it once the replicas are ready to start), and the
// time to the caller's deadline when that came first.
func TestOutcomeSettle_timeoutNamesTheBudget(t *testing.T) {
	const budget = time.Second
	began := time.Now().Add(-2 * budget)
	tests := []struct {
		name     string
		deadline time.Time
		want     string
	}{
		{"the budget's deadline, set 2ms after the run began", began.Add(budget + 2*time.Millisecond), "no answer within 1s"},
		{"the caller's, earlier", began.Add(300 * time.Millisecond), "no answer within 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithDeadline(context.Background(), tt.deadline)
			defer cancel()
			var o outcome
			o.settle(ctx, began, budget, &Job{Kind: KindValidate}, nil, errors.New("worker gave up"), false)
			if o.Label != LabelTimeout || o.Error != tt.want {
				t.Errorf("settle: %s %q, want %s %q", o.Label, o.Error, LabelTimeout, tt.want)
			}
		})
	}
}
