package reputationtest

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
)

// addIf calls s.AddIf, failing t on an error.
func addIf(t *testing.T, s reputation.ConditionalStore, cond reputation.Key, want reputation.Record, deltas ...reputation.Delta) bool {
	t.Helper()
	ok, err := s.AddIf(context.Background(), 0, cond, want, deltas)
	if err != nil {
		t.Fatalf("AddIf: %v", err)
	}
	return ok
}

// testAddIf checks a ConditionalStore's AddIf: it applies the deltas only
// while the condition's record reads what it is given, all of them or
// none, scaled by the horizon as Add scales them, and refuses what Add
// refuses.
func testAddIf(t *testing.T, s reputation.ConditionalStore) {
	mark := reputation.Key{Session: reputation.PanelSession, Operation: "marks", Kind: "a"}
	k := reputation.Key{Session: 4, Operation: "validate_v3"}
	moved := []reputation.Delta{{Key: mark, Delta: reputation.Record{Right: 1}}, {Key: k, Delta: reputation.Record{Wrong: 2}}}
	if !addIf(t, s, mark, reputation.Record{}, moved...) {
		t.Fatal("AddIf on a record never added to, given the zero Record, added nothing")
	}
	if addIf(t, s, mark, reputation.Record{}, moved...) {
		t.Error("AddIf added though the condition's record no longer reads the zero Record")
	}
	if addIf(t, s, mark, reputation.Record{Right: 1, Wrong: 1}, moved...) {
		t.Error("AddIf added though the condition's record reads otherwise")
	}
	want := []reputation.Record{{Right: 1}, {Wrong: 2}}
	if diff := cmp.Diff(want, Load(t, s, mark, k), tolerance); diff != "" {
		t.Errorf("after one AddIf that held and two that did not (-want +got):\n%s", diff)
	}
	// A condition on a record the deltas leave alone.
	other := reputation.Key{Session: 5}
	if !addIf(t, s, mark, reputation.Record{Right: 1}, reputation.Delta{Key: other, Delta: reputation.Record{Right: 3}}) {
		t.Error("AddIf did not add though the condition's record reads what it was given")
	}
	want = []reputation.Record{{Right: 1}, {Wrong: 2}, {Right: 3}}
	if diff := cmp.Diff(want, Load(t, s, mark, k, other), tolerance); diff != "" {
		t.Errorf("after an AddIf conditioned on another record (-want +got):\n%s", diff)
	}

	// A condition on a record as Load reads it, once its counts are
	// fractions a horizon scaled: what a Ledger's report gives AddIf.
	scaled := reputation.Key{Session: reputation.PanelSession, Operation: "marks", Kind: "scaled"}
	mustAdd(t, s, 3, reputation.Delta{Key: scaled, Delta: reputation.Record{Right: 0.1, Wrong: 0.2}},
		reputation.Delta{Key: scaled, Delta: reputation.Record{Right: 1.0 / 3, Wrong: 2.9}})
	read := Load(t, s, scaled)[0]
	if !addIf(t, s, scaled, read, reputation.Delta{Key: scaled, Delta: reputation.Record{Right: 1}}) {
		t.Errorf("AddIf given the record %+v as Load read it added nothing", read)
	}

	// The horizon scales the deltas as Add's does, and one out of range
	// is refused.
	ctx := context.Background()
	hk := reputation.Key{Session: reputation.PanelSession, Operation: "marks", Kind: "horizon"}
	hw := reputation.Key{Session: 6}
	mustAdd(t, s, 0, reputation.Delta{Key: hw, Delta: reputation.Record{Right: 6, Wrong: 2}})
	if ok, err := s.AddIf(ctx, 4, hk, reputation.Record{}, []reputation.Delta{{Key: hw, Delta: reputation.Record{Wrong: 4}}}); err != nil || !ok {
		t.Errorf("AddIf with horizon 4 = %v, %v; want true, nil", ok, err)
	}
	wantH := reputation.Record{Right: 6, Wrong: 2}.Add(reputation.Record{Wrong: 4}, 4)
	if diff := cmp.Diff([]reputation.Record{wantH}, Load(t, s, hw), tolerance); diff != "" {
		t.Errorf("AddIf with horizon 4 did not scale as Add does (-want +got):\n%s", diff)
	}
	if _, err := s.AddIf(ctx, math.NaN(), hk, reputation.Record{}, []reputation.Delta{{Key: hw, Delta: reputation.Record{Wrong: 1}}}); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("AddIf with a NaN horizon: error %v, want ErrInvalid", err)
	}
	if _, err := s.AddIf(ctx, 0, reputation.Key{Session: -1}, reputation.Record{}, moved); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("AddIf conditioned on a negative session: error %v, want ErrInvalid", err)
	}
	bad := []reputation.Delta{{Key: k, Delta: reputation.Record{Right: 1}}, {Key: reputation.Key{Session: -2}}}
	if _, err := s.AddIf(ctx, 0, mark, reputation.Record{Right: 1}, bad); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("AddIf of a delta of a negative session: error %v, want ErrInvalid", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.AddIf(cancelled, 0, mark, reputation.Record{Right: 1}, moved); !errors.Is(err, context.Canceled) {
		t.Errorf("AddIf with a cancelled context: error %v, want context.Canceled", err)
	}
	if diff := cmp.Diff(want, Load(t, s, mark, k, other), tolerance); diff != "" {
		t.Errorf("AddIf refused added (-want +got):\n%s", diff)
	}
}

// testAddIfShared checks, when the stores are ConditionalStores, that of
// AddIfs made at once through two stores over one database on the same
// condition, exactly one applies.
func testAddIfShared(t *testing.T, a, b reputation.Store) {
	ca, okA := a.(reputation.ConditionalStore)
	cb, okB := b.(reputation.ConditionalStore)
	if !okA || !okB {
		return
	}
	const rounds, each = 10, 4
	counter := reputation.Key{Session: 8}
	var applied atomic.Int64
	for i := range rounds {
		claim := reputation.Key{Session: reputation.PanelSession, Operation: "claims", Kind: string(rune('a' + i))}
		var wg sync.WaitGroup
		for _, s := range []reputation.ConditionalStore{ca, cb} {
			for range each {
				wg.Go(func() {
					ok, err := s.AddIf(context.Background(), 0, claim, reputation.Record{}, []reputation.Delta{
						{Key: claim, Delta: reputation.Record{Right: 1}},
						{Key: counter, Delta: reputation.Record{Right: 1}},
					})
					if err != nil {
						t.Errorf("AddIf: %v", err)
					}
					if ok {
						applied.Add(1)
					}
				})
			}
		}
		wg.Wait()
	}
	if n := applied.Load(); n != rounds {
		t.Errorf("of %d AddIfs at once on one condition through two stores, in each of %d rounds, %d applied in all; want one a round", 2*each, rounds, n)
	}
	if diff := cmp.Diff([]reputation.Record{{Right: rounds}}, Load(t, a, counter), tolerance); diff != "" {
		t.Errorf("after %d rounds of AddIfs at once on one condition (-want +got):\n%s", rounds, diff)
	}
}
