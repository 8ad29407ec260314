// Package reputationtest holds the test suite that every
// [reputation.Store] passes. A store's own tests call [TestStore] with a
// constructor of empty stores, and [TestShared] with a constructor of two
// stores over one database. [Load] reads records for tests that check
// what a Book, or a service over one, wrote.
package reputationtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/reputation"
)

// tolerance is how far a store's float64 arithmetic may drift from
// Record.Add's (a database may round differently): relative 1e-9.
var tolerance = cmpopts.EquateApprox(1e-9, 1e-12)

// TestStore runs the suite against stores made by newStore, which must
// return an empty store each time it is called and arrange its cleanup
// with t.Cleanup; the cases of AddIf run when the store is a
// reputation.ConditionalStore.
func TestStore(t *testing.T, newStore func(t *testing.T) reputation.Store) {
	t.Run("Unknown", func(t *testing.T) { testUnknown(t, newStore(t)) })
	t.Run("Sums", func(t *testing.T) { testSums(t, newStore(t)) })
	t.Run("KeysApart", func(t *testing.T) { testKeysApart(t, newStore(t)) })
	t.Run("Horizon", func(t *testing.T) { testHorizon(t, newStore(t)) })
	t.Run("Invalid", func(t *testing.T) { testInvalid(t, newStore(t)) })
	t.Run("Withdraw", func(t *testing.T) { testWithdraw(t, newStore(t)) })
	t.Run("Cancelled", func(t *testing.T) { testCancelled(t, newStore(t)) })
	t.Run("Concurrent", func(t *testing.T) { testConcurrent(t, newStore(t)) })
	if _, ok := newStore(t).(reputation.ConditionalStore); ok {
		t.Run("AddIf", func(t *testing.T) { testAddIf(t, newStore(t).(reputation.ConditionalStore)) })
	}
}

// TestShared checks that two stores over one database, made by open (an
// empty database each call), learn together: what one adds the other
// loads, and concurrent adds through both lose nothing.
func TestShared(t *testing.T, open func(t *testing.T) (a, b reputation.Store)) {
	a, b := open(t)
	ctx := context.Background()
	k := reputation.Key{Session: 7, Operation: "validate_v3"}
	mustAdd(t, a, 0, reputation.Delta{Key: k, Delta: reputation.Record{Right: 1}})
	mustAdd(t, b, 0, reputation.Delta{Key: k, Delta: reputation.Record{Wrong: 2}})
	for name, s := range map[string]reputation.Store{"a": a, "b": b} {
		got := Load(t, s, k)
		if diff := cmp.Diff([]reputation.Record{{Right: 1, Wrong: 2}}, got, tolerance); diff != "" {
			t.Errorf("store %s after one add through each (-want +got):\n%s", name, diff)
		}
	}

	const each = 50
	var wg sync.WaitGroup
	for _, s := range []reputation.Store{a, b} {
		for range each {
			wg.Go(func() {
				if err := s.Add(ctx, 0, []reputation.Delta{{Key: k, Delta: reputation.Record{Right: 1, Wrong: 0.5}}}); err != nil {
					t.Errorf("Add: %v", err)
				}
			})
		}
	}
	wg.Wait()
	want := []reputation.Record{{Right: 1 + 2*each, Wrong: 2 + each}}
	if diff := cmp.Diff(want, Load(t, a, k), tolerance); diff != "" {
		t.Errorf("after %d concurrent adds through each store (-want +got):\n%s", each, diff)
	}
	testAddIfShared(t, a, b)
}

func mustAdd(t *testing.T, s reputation.Store, horizon float64, deltas ...reputation.Delta) {
	t.Helper()
	if err := s.Add(context.Background(), horizon, deltas); err != nil {
		t.Fatalf("Add(%v, %+v): %v", horizon, deltas, err)
	}
}

// Load returns the records of keys in s, failing t when s cannot load
// them: for tests that check what a Book or a service wrote.
func Load(t testing.TB, s reputation.Store, keys ...reputation.Key) []reputation.Record {
	t.Helper()
	got, err := s.Load(context.Background(), keys)
	if err != nil {
		t.Fatalf("Load(%+v): %v", keys, err)
	}
	return got
}

func testUnknown(t *testing.T, s reputation.Store) {
	got := Load(t, s, reputation.Key{Session: 1}, reputation.Key{Session: 2, Operation: "validate_v3", Kind: "fact"})
	if diff := cmp.Diff([]reputation.Record{{}, {}}, got); diff != "" {
		t.Errorf("Load of unknown keys (-want +got):\n%s", diff)
	}
	if got := Load(t, s); len(got) != 0 {
		t.Errorf("Load of no keys = %v, want none", got)
	}
	mustAdd(t, s, 0) // no deltas: nothing to do, no error
}

func testSums(t *testing.T, s reputation.Store) {
	k := reputation.Key{Session: 3}
	mustAdd(t, s, 0, reputation.Delta{Key: k, Delta: reputation.Record{Right: 0.75, Wrong: 0.25}})
	mustAdd(t, s, 0,
		reputation.Delta{Key: k, Delta: reputation.Record{Right: 1}},
		reputation.Delta{Key: k, Delta: reputation.Record{Wrong: 2.5}},
	)
	got := Load(t, s, k, k)
	want := []reputation.Record{{Right: 1.75, Wrong: 2.75}, {Right: 1.75, Wrong: 2.75}}
	if diff := cmp.Diff(want, got, tolerance); diff != "" {
		t.Errorf("after three adds (-want +got):\n%s", diff)
	}
}

func testKeysApart(t *testing.T, s reputation.Store) {
	keys := []reputation.Key{
		{Session: 1},
		{Session: 2},
		{Session: 1, Operation: "validate_v3"},
		{Session: 1, Operation: "factcheck_v3"},
		{Session: 1, Operation: "validate_v3", Kind: "code"},
		{Session: 1, Operation: "validate_v3", Kind: "fact"},
		{Session: reputation.PanelSession, Operation: "validate_v3"},
	}
	var deltas []reputation.Delta
	var want []reputation.Record
	for i, k := range keys {
		r := reputation.Record{Right: float64(i + 1), Wrong: float64(10 * (i + 1))}
		deltas = append(deltas, reputation.Delta{Key: k, Delta: r})
		want = append(want, r)
	}
	mustAdd(t, s, 0, deltas...)
	if diff := cmp.Diff(want, Load(t, s, keys...), tolerance); diff != "" {
		t.Errorf("keys differing in one field share a record (-want +got):\n%s", diff)
	}
}

func testHorizon(t *testing.T, s reputation.Store) {
	k := reputation.Key{Session: 4, Operation: "delegate_v3"}
	const h = 10
	var want reputation.Record
	steps := []reputation.Record{{Right: 6, Wrong: 2}, {Right: 3, Wrong: 1}, {Wrong: 5}, {Right: 0.5}}
	for _, d := range steps {
		mustAdd(t, s, h, reputation.Delta{Key: k, Delta: d})
		want = want.Add(d, h)
	}
	got := Load(t, s, k)
	if diff := cmp.Diff([]reputation.Record{want}, got, tolerance); diff != "" {
		t.Errorf("with horizon %v (-want +got):\n%s", float64(h), diff)
	}
	if sum := got[0].Right + got[0].Wrong; math.Abs(sum-h) > 1e-9 {
		t.Errorf("counts sum to %v, want the horizon %v", sum, float64(h))
	}
	// Deltas of one key in one batch apply in order, each scaled.
	k2 := reputation.Key{Session: 5}
	mustAdd(t, s, h, reputation.Delta{Key: k2, Delta: steps[0]}, reputation.Delta{Key: k2, Delta: steps[1]}, reputation.Delta{Key: k2, Delta: steps[2]})
	w2 := reputation.Record{}.Add(steps[0], h).Add(steps[1], h).Add(steps[2], h)
	if diff := cmp.Diff([]reputation.Record{w2}, Load(t, s, k2), tolerance); diff != "" {
		t.Errorf("one batch with horizon %v (-want +got):\n%s", float64(h), diff)
	}
}

func testInvalid(t *testing.T, s reputation.Store) {
	ctx := context.Background()
	good := reputation.Delta{Key: reputation.Key{Session: 1}, Delta: reputation.Record{Right: 1}}
	bad := []struct {
		name    string
		horizon float64
		delta   reputation.Delta
	}{
		{"negative session", 0, reputation.Delta{Key: reputation.Key{Session: -1}, Delta: reputation.Record{Right: 1}}},
		{"kind without operation", 0, reputation.Delta{Key: reputation.Key{Session: 1, Kind: "code"}, Delta: reputation.Record{Right: 1}}},
		{"count beyond MaxCount", 0, reputation.Delta{Key: reputation.Key{Session: 1}, Delta: reputation.Record{Wrong: 2 * reputation.MaxCount}}},
		{"count below -MaxCount", 0, reputation.Delta{Key: reputation.Key{Session: 1}, Delta: reputation.Record{Wrong: -2 * reputation.MaxCount}}},
		{"horizon beyond MaxCount", 2 * reputation.MaxCount, good},
		{"NaN count", 0, reputation.Delta{Key: reputation.Key{Session: 1}, Delta: reputation.Record{Right: math.NaN()}}},
		{"infinite count", 0, reputation.Delta{Key: reputation.Key{Session: 1}, Delta: reputation.Record{Right: math.Inf(1)}}},
		{"negative horizon", -1, good},
		{"NaN horizon", math.NaN(), good},
		{"operation with a NUL byte", 0, reputation.Delta{Key: reputation.Key{Session: 1, Operation: "validate\x00v3"}, Delta: reputation.Record{Right: 1}}},
		{"kind not UTF-8", 0, reputation.Delta{Key: reputation.Key{Session: 1, Operation: "validate_v3", Kind: "\xff"}, Delta: reputation.Record{Right: 1}}},
		{"operation beyond MaxNameLen", 0, reputation.Delta{Key: reputation.Key{Session: 1, Operation: strings.Repeat("o", reputation.MaxNameLen+1)}, Delta: reputation.Record{Right: 1}}},
		{"kind beyond MaxNameLen", 0, reputation.Delta{Key: reputation.Key{Session: 1, Operation: "o", Kind: strings.Repeat("k", reputation.MaxNameLen+1)}, Delta: reputation.Record{Right: 1}}},
	}
	for _, c := range bad {
		err := s.Add(ctx, c.horizon, []reputation.Delta{good, c.delta})
		if !errors.Is(err, reputation.ErrInvalid) {
			t.Errorf("Add with %s: error %v, want ErrInvalid", c.name, err)
		}
	}
	if diff := cmp.Diff([]reputation.Record{{}}, Load(t, s, good.Key)); diff != "" {
		t.Errorf("a refused batch added its valid delta (-want +got):\n%s", diff)
	}
	if _, err := s.Load(ctx, []reputation.Key{{Session: -2}}); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("Load of a negative session: error %v, want ErrInvalid", err)
	}
	if _, err := s.Load(ctx, []reputation.Key{{Session: 1, Operation: "\x00"}}); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("Load of an operation with a NUL byte: error %v, want ErrInvalid", err)
	}
	// The longest names every store keeps, each name of its own.
	long := []reputation.Key{
		{Session: 1, Operation: strings.Repeat("o", reputation.MaxNameLen), Kind: randomName(t, reputation.MaxNameLen)},
		{Session: 1, Operation: strings.Repeat("o", reputation.MaxNameLen), Kind: randomName(t, reputation.MaxNameLen)},
	}
	mustAdd(t, s, 0, reputation.Delta{Key: long[0], Delta: reputation.Record{Right: 1}}, reputation.Delta{Key: long[1], Delta: reputation.Record{Wrong: 1}})
	if diff := cmp.Diff([]reputation.Record{{Right: 1}, {Wrong: 1}}, Load(t, s, long...)); diff != "" {
		t.Errorf("keys of names MaxNameLen long (-want +got):\n%s", diff)
	}
}

// testWithdraw: a negative count withdraws evidence, never below zero,
// and moving evidence from one count to the other leaves a full record's
// sum at the horizon.
func testWithdraw(t *testing.T, s reputation.Store) {
	k := reputation.Key{Session: 3}
	mustAdd(t, s, 10, reputation.Delta{Key: k, Delta: reputation.Record{Right: 6, Wrong: 4}})
	mustAdd(t, s, 10, reputation.Delta{Key: k, Delta: reputation.Record{Right: -4, Wrong: 4}})
	if diff := cmp.Diff([]reputation.Record{{Right: 2, Wrong: 8}}, Load(t, s, k), tolerance); diff != "" {
		t.Errorf("after moving 4 from Right to Wrong (-want +got):\n%s", diff)
	}
	mustAdd(t, s, 10, reputation.Delta{Key: k, Delta: reputation.Record{Right: -5}})
	if diff := cmp.Diff([]reputation.Record{{Right: 0, Wrong: 8}}, Load(t, s, k), tolerance); diff != "" {
		t.Errorf("after withdrawing more than Right holds (-want +got):\n%s", diff)
	}
}

func testCancelled(t *testing.T, s reputation.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	k := reputation.Key{Session: 9}
	if err := s.Add(ctx, 0, []reputation.Delta{{Key: k, Delta: reputation.Record{Right: 1}}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Add with a cancelled context: error %v, want context.Canceled", err)
	}
	if _, err := s.Load(ctx, []reputation.Key{k}); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: error %v, want context.Canceled", err)
	}
	if diff := cmp.Diff([]reputation.Record{{}}, Load(t, s, k)); diff != "" {
		t.Errorf("Add with a cancelled context added (-want +got):\n%s", diff)
	}
}

func testConcurrent(t *testing.T, s reputation.Store) {
	ctx := context.Background()
	k := reputation.Key{Session: 11, Operation: "validate_v3"}
	other := reputation.Key{Session: 12}
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				if err := s.Add(ctx, 0, []reputation.Delta{
					{Key: k, Delta: reputation.Record{Right: 1, Wrong: 0.25}},
					{Key: other, Delta: reputation.Record{Wrong: 1}},
				}); err != nil {
					t.Errorf("Add: %v", err)
					return
				}
				if _, err := s.Load(ctx, []reputation.Key{k, other}); err != nil {
					t.Errorf("Load: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	n := float64(writers * each)
	want := []reputation.Record{{Right: n, Wrong: n / 4}, {Wrong: n}}
	if diff := cmp.Diff(want, Load(t, s, k, other), tolerance); diff != "" {
		t.Errorf("after %v concurrent adds (-want +got):\n%s", n, diff)
	}
}

// randomName returns n bytes of random hexadecimal digits: a name a
// database cannot compress.
func randomName(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)[:n]
}
