package x402test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// TestReplayStore runs the conformance suite of x402.ReplayStore against
// the stores made by newStores, called once per subtest; it must return
// two handles on one empty store. The suite checks that:
//
//   - a key is accepted once, and refused after that on either handle;
//   - a key is refused until its time, and accepted again from then on;
//   - Release makes a key acceptable again; a Release under the time of
//     a reservation that was taken over after its time frees nothing;
//   - keys are independent of each other;
//   - of concurrent Reserves of one key, exactly one is accepted;
//   - a settlement marked on one handle is found on the other, as
//     marked, while the key lasts; a key not marked, released, unknown,
//     expired or taken over after its time has none.
func TestReplayStore(t *testing.T, newStores func(t *testing.T) (a, b x402.ReplayStore)) {
	t.Run("Once", func(t *testing.T) { replayOnce(t, newStores) })
	t.Run("Expiry", func(t *testing.T) { replayExpiry(t, newStores) })
	t.Run("Release", func(t *testing.T) { replayRelease(t, newStores) })
	t.Run("ReleaseAfterTakeover", func(t *testing.T) { replayReleaseAfterTakeover(t, newStores) })
	t.Run("Independent", func(t *testing.T) { replayIndependent(t, newStores) })
	t.Run("Concurrent", func(t *testing.T) { replayConcurrent(t, newStores) })
	t.Run("Settled", func(t *testing.T) { replaySettled(t, newStores) })
}

func wantReserve(t *testing.T, what string, s x402.ReplayStore, key string, now, until time.Time, want bool) {
	t.Helper()
	got, err := s.Reserve(context.Background(), key, now, until)
	if err != nil {
		t.Fatalf("%s: Reserve(%q) = %v", what, key, err)
	}
	if got != want {
		t.Errorf("%s: Reserve(%q) = %v, want %v", what, key, got, want)
	}
}

func replayOnce(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	until := base().Add(time.Hour)
	wantReserve(t, "first", a, "auth-1", base(), until, true)
	wantReserve(t, "again on the same handle", a, "auth-1", base(), until, false)
	wantReserve(t, "again on the other handle", b, "auth-1", base().Add(time.Minute), until, false)
}

func replayExpiry(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	until := base().Add(time.Hour)
	wantReserve(t, "first", a, "auth-1", base(), until, true)
	wantReserve(t, "just before its time", b, "auth-1", until.Add(-time.Millisecond), until.Add(time.Hour), false)
	wantReserve(t, "at its time", b, "auth-1", until, until.Add(time.Hour), true)
	wantReserve(t, "after being taken again", a, "auth-1", until.Add(time.Minute), until.Add(time.Hour), false)
}

func replayRelease(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	until := base().Add(time.Hour)
	wantReserve(t, "first", a, "auth-1", base(), until, true)
	if err := a.Release(context.Background(), "auth-1", until); err != nil {
		t.Fatalf("Release = %v", err)
	}
	wantReserve(t, "after Release", b, "auth-1", base(), until, true)
	wantReserve(t, "again", a, "auth-1", base(), until, false)
}

// replayReleaseAfterTakeover: a request that outlived its reservation
// releases it late, after another took the key over at its time; the
// key stays the new holder's.
func replayReleaseAfterTakeover(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	first := base().Add(time.Hour)
	second := first.Add(time.Hour)
	wantReserve(t, "first", a, "auth-1", base(), first, true)
	wantReserve(t, "taken over at its time", b, "auth-1", first, second, true)
	if err := a.Release(context.Background(), "auth-1", first); err != nil {
		t.Fatalf("late Release = %v", err)
	}
	wantReserve(t, "after the first holder's late Release", a, "auth-1", first.Add(time.Minute), second, false)
	if err := b.Release(context.Background(), "auth-1", second); err != nil {
		t.Fatalf("Release by the new holder = %v", err)
	}
	wantReserve(t, "after the new holder's Release", a, "auth-1", first.Add(time.Minute), second, true)
}

func replayIndependent(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	until := base().Add(time.Hour)
	wantReserve(t, "first key", a, "auth-1", base(), until, true)
	wantReserve(t, "second key", b, "auth-2", base(), until, true)
	if err := a.Release(context.Background(), "auth-2", until); err != nil {
		t.Fatal(err)
	}
	wantReserve(t, "first key after the second was released", b, "auth-1", base(), until, false)
}

func replayConcurrent(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	const n = 16
	var accepted atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			ok, err := s.Reserve(context.Background(), "auth-1", base(), base().Add(time.Hour))
			if err != nil {
				t.Error(err)
			}
			if ok {
				accepted.Add(1)
			}
		})
	}
	wg.Wait()
	if got := accepted.Load(); got != 1 {
		t.Errorf("%d of %d concurrent Reserves accepted the key, want 1", got, n)
	}
}

func wantSettled(t *testing.T, what string, s x402.ReplayStore, key string, now time.Time, want *x402.SettledPayment) {
	t.Helper()
	got, ok, err := s.LookupSettled(context.Background(), key, now)
	if err != nil {
		t.Fatalf("%s: LookupSettled(%q) = %v", what, key, err)
	}
	if want == nil {
		if ok {
			t.Errorf("%s: LookupSettled(%q) = %+v, want none", what, key, got)
		}
		return
	}
	if !ok {
		t.Errorf("%s: LookupSettled(%q) found none, want %+v", what, key, *want)
	} else if diff := cmp.Diff(*want, got); diff != "" {
		t.Errorf("%s: LookupSettled(%q) (-want +got):\n%s", what, key, diff)
	}
}

func markSettled(t *testing.T, s x402.ReplayStore, key string, sp x402.SettledPayment) {
	t.Helper()
	if err := s.MarkSettled(context.Background(), key, sp); err != nil {
		t.Fatalf("MarkSettled(%q) = %v", key, err)
	}
}

func replaySettled(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	until := base().Add(time.Hour)
	sp := x402.SettledPayment{
		Request: "request-digest",
		Settlement: x402.SettleResponse{
			Success: true, Payer: "0xpayer", Transaction: "0xtx", Network: "eip155:84532", Amount: "1000",
			Extensions: map[string]json.RawMessage{"ext": json.RawMessage(`{"id":"x"}`)},
		},
	}
	wantSettled(t, "unknown key", b, "auth-1", base(), nil)
	markSettled(t, a, "auth-1", sp) // not recorded: nothing to mark
	wantSettled(t, "marked before Reserve", b, "auth-1", base(), nil)

	wantReserve(t, "first", a, "auth-1", base(), until, true)
	wantSettled(t, "reserved, not settled", b, "auth-1", base(), nil)
	markSettled(t, a, "auth-1", sp)
	wantSettled(t, "settled, on the other handle", b, "auth-1", base().Add(time.Minute), &sp)
	wantReserve(t, "settled key again", b, "auth-1", base(), until, false)
	wantSettled(t, "still settled after a refused Reserve", a, "auth-1", base(), &sp)
	wantSettled(t, "at its time", b, "auth-1", until, nil)
	wantReserve(t, "taken over at its time", b, "auth-1", until, until.Add(time.Hour), true)
	wantSettled(t, "taken over", a, "auth-1", until, nil)

	wantReserve(t, "second key", a, "auth-2", base(), until, true)
	markSettled(t, a, "auth-2", sp)
	if err := b.Release(context.Background(), "auth-2", until); err != nil {
		t.Fatal(err)
	}
	wantSettled(t, "released", a, "auth-2", base(), nil)
}
