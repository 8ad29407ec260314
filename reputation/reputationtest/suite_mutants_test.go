package reputationtest_test

// Mutation test of the conformance suite: it runs TestStore against a
// deliberately broken store in a child process and fails when the suite
// passes it.

import (
	"context"
	"math"
	"testing"

	"github.com/vouchkit/vouch/internal/mutanttest"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// horizonBlind is Memory whose AddIf ignores its horizon: it neither
// scales the deltas by it nor refuses one out of range. The contract:
// "AddIf applies deltas as Add does ... It returns an error wrapping
// ErrInvalid for cond, a delta or horizon out of range". reputation's
// Ledger calls AddIf with its Options.Horizon (ledger.go:195).
type horizonBlind struct{ *reputation.Memory }

func (s horizonBlind) AddIf(ctx context.Context, _ float64, cond reputation.Key, want reputation.Record, deltas []reputation.Delta) (bool, error) {
	return s.Memory.AddIf(ctx, 0, cond, want, deltas) // the mutation
}

var _ reputation.ConditionalStore = horizonBlind{}

// TestStoreSuite_catchesAddIfIgnoringHorizon: the suite should fail a
// ConditionalStore whose AddIf ignores the horizon. Every AddIf of the
// suite passes horizon 0, so it cannot tell.
func TestStoreSuite_catchesAddIfIgnoringHorizon(t *testing.T) {
	if mutanttest.Child(t) {
		reputationtest.TestStore(t, func(*testing.T) reputation.Store { return horizonBlind{new(reputation.Memory)} })
		return
	}
	// The store is broken: a NaN horizon is taken.
	if _, err := (horizonBlind{new(reputation.Memory)}).AddIf(context.Background(), math.NaN(), reputation.Key{Session: 1}, reputation.Record{}, nil); err != nil {
		t.Fatalf("the mutant is not broken: %v", err)
	}
	mutanttest.MustFail(t, "AddIf ignores its horizon")
}
