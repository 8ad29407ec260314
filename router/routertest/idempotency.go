package routertest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/router"
)

// TestIdempotencyStore runs the conformance suite of router.IdempotencyStore
// against the stores made by newStores, called once per subtest; it must
// return two handles on one empty store. The suite checks that:
//
//   - the first Reserve of a key reserves it, and a repeat from either
//     handle sees it in flight, with the holder's fingerprint;
//   - a completed key replays its response to either handle, with the
//     fingerprint of the request that stored it (a reused key is told
//     apart by it);
//   - a waiting request learns of the completion: a non-nil Done channel
//     is closed by Complete, and asking again finds the response;
//   - Release forgets a key, so that it can be reserved again;
//   - a completed key is forgotten at its expiry, not before;
//   - keys are independent of each other;
//   - of concurrent Reserves of one key, exactly one reserves it, and
//     requests that wait for the result and ask again all get the one
//     response (the workers run once);
//   - Complete and Release act only under the lease of the reservation
//     that holds the key.
func TestIdempotencyStore(t *testing.T, newStores func(t *testing.T) (a, b router.IdempotencyStore)) {
	t.Run("FirstReserves", func(t *testing.T) { idemFirstReserves(t, newStores) })
	t.Run("Replay", func(t *testing.T) { idemReplay(t, newStores) })
	t.Run("Done", func(t *testing.T) { idemDone(t, newStores) })
	t.Run("Release", func(t *testing.T) { idemRelease(t, newStores) })
	t.Run("Expiry", func(t *testing.T) { idemExpiry(t, newStores) })
	t.Run("Independent", func(t *testing.T) { idemIndependent(t, newStores) })
	t.Run("ConcurrentReserve", func(t *testing.T) { idemConcurrentReserve(t, newStores) })
	t.Run("RunsOnce", func(t *testing.T) { idemRunsOnce(t, newStores) })
	t.Run("HolderOnly", func(t *testing.T) { idemHolderOnly(t, newStores) })
}

// idemHolderOnly: Complete and Release act only under the lease of the
// reservation that holds the key.
func idemHolderOnly(t *testing.T, newStores func(*testing.T) (a, b router.IdempotencyStore)) {
	a, b := newStores(t)
	e := reserve(t, a, "k", fp1, base())
	if e.Lease == "" {
		t.Fatal("Reserve gave no lease")
	}
	if err := b.Complete(context.Background(), "k", e.Lease+"x", &router.StoredResponse{Status: 200}, base()); err != nil {
		t.Fatal(err)
	}
	if err := b.Release(context.Background(), "k", e.Lease+"x"); err != nil {
		t.Fatal(err)
	}
	wantState(t, "after another lease's Complete and Release", reserve(t, b, "k", fp2, base()), router.IdempotencyInFlight, fp1)
	complete(t, b, "k", e.Lease, &router.StoredResponse{Status: 201})
	got := reserve(t, a, "k", fp1, base())
	wantState(t, "after the holder's Complete", got, router.IdempotencyCompleted, fp1)
	if got.Response.Status != 201 {
		t.Errorf("stored status = %d, want the holder's 201", got.Response.Status)
	}
}

const (
	fp1 = "sha256:1111"
	fp2 = "sha256:2222"
)

func reserve(t *testing.T, s router.IdempotencyStore, key, fp string, now time.Time) router.IdempotencyEntry {
	t.Helper()
	e, err := s.Reserve(context.Background(), key, fp, now, now.Add(time.Hour))
	if err != nil {
		t.Fatalf("Reserve(%q, %q) = %v", key, fp, err)
	}
	return e
}

func complete(t *testing.T, s router.IdempotencyStore, key, lease string, resp *router.StoredResponse) {
	t.Helper()
	if err := s.Complete(context.Background(), key, lease, resp, base()); err != nil {
		t.Fatalf("Complete(%q) = %v", key, err)
	}
}

func wantState(t *testing.T, what string, e router.IdempotencyEntry, state router.IdempotencyState, fp string) {
	t.Helper()
	if e.State != state {
		t.Fatalf("%s: state = %d, want %d", what, e.State, state)
	}
	if state != router.IdempotencyReserved && e.Fingerprint != fp {
		t.Errorf("%s: fingerprint = %q, want %q", what, e.Fingerprint, fp)
	}
}

func idemFirstReserves(t *testing.T, newStores func(*testing.T) (a, b router.IdempotencyStore)) {
	a, b := newStores(t)
	wantState(t, "first Reserve", reserve(t, a, "k", fp1, base()), router.IdempotencyReserved, "")
	wantState(t, "repeat on the same handle", reserve(t, a, "k", fp1, base()), router.IdempotencyInFlight, fp1)
	wantState(t, "repeat on the other handle", reserve(t, b, "k", fp1, base()), router.IdempotencyInFlight, fp1)
	wantState(t, "other request with the key", reserve(t, b, "k", fp2, base()), router.IdempotencyInFlight, fp1)
}

func idemReplay(t *testing.T, newStores func(*testing.T) (a, b router.IdempotencyStore)) {
	for _, want := range []*router.StoredResponse{
		{Status: 200, ContentType: "application/json", Body: []byte(`{"verdict":"VALID","note":"é\u0000"}`)},
		{Status: 422, ContentType: "application/problem+json", Body: []byte(`{"status":422}`)},
		{Status: 204},
		// Bytes JSON and a text column cannot hold: a Content-Type that
		// is not UTF-8 (obs-text) and such a body.
		{Status: 299, ContentType: "text/plain; charset=caf\xe9", Body: []byte("caf\xe9 \xff\x00")},
		{Status: 200, ContentType: "text/plain\x00", Body: []byte("\x00")},
	} {
		t.Run(fmt.Sprint(want.Status), func(t *testing.T) {
			a, b := newStores(t)
			e := reserve(t, a, "k", fp1, base())
			complete(t, a, "k", e.Lease, want)
			for name, s := range map[string]router.IdempotencyStore{"same handle": a, "other handle": b} {
				e := reserve(t, s, "k", fp1, base().Add(time.Minute))
				wantState(t, name, e, router.IdempotencyCompleted, fp1)
				if diff := cmp.Diff(want, e.Response, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s: replayed response mismatch (-want +got):\n%s", name, diff)
				}
			}
			wantState(t, "other request with the key", reserve(t, b, "k", fp2, base()), router.IdempotencyCompleted, fp1)
		})
	}
}

func idemDone(t *testing.T, newStores func(*testing.T) (a, b router.IdempotencyStore)) {
	a, b := newStores(t)
	held := reserve(t, a, "k", fp1, base())
	e := reserve(t, b, "k", fp1, base())
	if e.Done != nil {
		select {
		case <-e.Done:
			t.Fatal("Done closed before the key was completed")
		default:
		}
	}
	complete(t, a, "k", held.Lease, &router.StoredResponse{Status: 200})
	if e.Done != nil {
		select {
		case <-e.Done:
		default:
			t.Fatal("Done still open after Complete returned")
		}
	}
	// A store that cannot notify is polled: asking again finds the response.
	wantState(t, "asking again", reserve(t, b, "k", fp1, base()), router.IdempotencyCompleted, fp1)
}

func idemRelease(t *testing.T, newStores func(*testing.T) (a, b router.IdempotencyStore)) {
	a, b := newStores(t)
	e := reserve(t, a, "k", fp1, base())
	if err := a.Release(context.Background(), "k", e.Lease); err != nil {
		t.Fatalf("Release = %v", err)
	}
	wantState(t, "Reserve after Release", reserve(t, b, "k", fp2, base()), router.IdempotencyReserved, "")
	wantState(t, "repeat of the new request", reserve(t, a, "k", fp1, base()), router.IdempotencyInFlight, fp2)
}

func idemExpiry(t *testing.T, newStores func(*testing.T) (a, b router.IdempotencyStore)) {
	a, b := newStores(t)
	expires := base().Add(time.Hour)
	e, err := a.Reserve(context.Background(), "k", fp1, base(), expires)
	if err != nil {
		t.Fatal(err)
	}
	complete(t, a, "k", e.Lease, &router.StoredResponse{Status: 200, Body: []byte("{}")})
	wantState(t, "just before expiry", reserve(t, b, "k", fp2, expires.Add(-time.Millisecond)), router.IdempotencyCompleted, fp1)
	wantState(t, "at expiry", reserve(t, b, "k", fp2, expires), router.IdempotencyReserved, "")
	wantState(t, "after expiry, the new holder", reserve(t, a, "k", fp1, expires), router.IdempotencyInFlight, fp2)
}

func idemIndependent(t *testing.T, newStores func(*testing.T) (a, b router.IdempotencyStore)) {
	a, b := newStores(t)
	e := reserve(t, a, "caller-1:k", fp1, base())
	complete(t, a, "caller-1:k", e.Lease, &router.StoredResponse{Status: 200})
	wantState(t, "same key of another caller", reserve(t, b, "caller-2:k", fp1, base()), router.IdempotencyReserved, "")
	wantState(t, "another key", reserve(t, b, "caller-1:k2", fp1, base()), router.IdempotencyReserved, "")
}

func idemConcurrentReserve(t *testing.T, newStores func(*testing.T) (a, b router.IdempotencyStore)) {
	a, b := newStores(t)
	const n = 16
	var reserved, inFlight atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			e, err := s.Reserve(context.Background(), "k", fp1, base(), base().Add(time.Hour))
			switch {
			case err != nil:
				t.Error(err)
			case e.State == router.IdempotencyReserved:
				reserved.Add(1)
			case e.State == router.IdempotencyInFlight:
				inFlight.Add(1)
			}
		})
	}
	wg.Wait()
	if reserved.Load() != 1 || inFlight.Load() != n-1 {
		t.Errorf("reserved %d, in flight %d; want 1 and %d", reserved.Load(), inFlight.Load(), n-1)
	}
}

// idemRunsOnce plays the Handler's protocol from many goroutines on both
// handles: reserve, run and complete, or wait and ask again, or replay.
func idemRunsOnce(t *testing.T, newStores func(*testing.T) (a, b router.IdempotencyStore)) {
	a, b := newStores(t)
	const n = 12
	var runs atomic.Int32
	bodies := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			ctx := context.Background()
			for range 2000 {
				e, err := s.Reserve(ctx, "k", fp1, base(), base().Add(time.Hour))
				if err != nil {
					t.Error(err)
					return
				}
				switch e.State {
				case router.IdempotencyReserved:
					body := fmt.Sprintf(`{"run":%d}`, runs.Add(1))
					bodies[i] = body
					if err := s.Complete(ctx, "k", e.Lease, &router.StoredResponse{Status: 200, Body: []byte(body)}, base()); err != nil {
						t.Error(err)
					}
					return
				case router.IdempotencyCompleted:
					bodies[i] = string(e.Response.Body)
					return
				}
				if e.Done != nil {
					<-e.Done
				} else {
					time.Sleep(time.Millisecond)
				}
			}
			t.Error("the key was never completed")
		})
	}
	wg.Wait()
	if runs.Load() != 1 {
		t.Fatalf("the request ran %d times, want once", runs.Load())
	}
	for i, body := range bodies {
		if body != `{"run":1}` {
			t.Errorf("request %d got %q, want the one response", i, body)
		}
	}
}

// base is the instant the store suites treat as now.
func base() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }
