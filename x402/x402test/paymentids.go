package x402test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/x402"
)

// TestPaymentIDStore runs the conformance suite against payment id
// stores made by newStore, which is called once per subtest and must
// return an empty store; close it with t.Cleanup. The suite checks that:
//
//   - the first Begin of an id reports true; a second returns the
//     record (the request it began with, not done) and false;
//   - Finish keeps the response and settlement until its keep, past the
//     until of its Begin (the running request's lease), and a later Begin
//     returns them (status, headers, body, settlement) with Done set (by
//     the store: Finish is given a record without it), the
//     header and body byte for byte: header values that are not UTF-8,
//     empty and repeated values, a body that is not UTF-8;
//   - Release frees the id for a new Begin;
//   - a Finish or Release of a request whose id was taken over after its
//     until changes nothing of the new first request's record;
//   - an id whose until has passed may begin again;
//   - of concurrent Begins of one id, exactly one reports true (run it
//     with -race).
func TestPaymentIDStore(t *testing.T, newStore func(t *testing.T) x402.PaymentIDStore) {
	now := base()
	until := now.Add(time.Hour)
	t.Run("BeginOnce", func(t *testing.T) {
		s := newStore(t)
		if _, fresh, err := s.Begin(t.Context(), "pay_0123456789abcdef", "req-1", now, until); err != nil || !fresh {
			t.Fatalf("first Begin = %v, %v; want true", fresh, err)
		}
		r, fresh, err := s.Begin(t.Context(), "pay_0123456789abcdef", "req-2", now, until)
		if err != nil || fresh || r.Request != "req-1" || r.Done {
			t.Errorf("second Begin = %+v, %v, %v; want the first request's record, not done", r, fresh, err)
		}
	})
	t.Run("FinishKeepsTheResponse", func(t *testing.T) {
		s := newStore(t)
		lease := now.Add(time.Minute)
		if _, _, err := s.Begin(t.Context(), "pay_0123456789abcdef", "req-1", now, lease); err != nil {
			t.Fatal(err)
		}
		want := x402.PaymentIDRecord{Request: "req-1", Done: true,
			Response:   x402.BufferedResponse{Status: http.StatusCreated, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("the answer")},
			Settlement: &x402.SettleResponse{Success: true, Transaction: "0x01", Network: "eip155:84532", Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66", Amount: "1000"}}
		// Finished as Middleware finishes it, Done not set: the store sets it.
		finished := want
		finished.Done = false
		if err := s.Finish(t.Context(), "pay_0123456789abcdef", lease, until, finished); err != nil {
			t.Fatal(err)
		}
		// Past the lease, before the keep: the response answers.
		got, fresh, err := s.Begin(t.Context(), "pay_0123456789abcdef", "req-1", lease.Add(time.Minute), lease.Add(2*time.Minute))
		if err != nil || fresh {
			t.Fatalf("Begin after Finish, past the Begin's until = %v, %v; want the kept record", fresh, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("record kept (-want +got):\n%s", diff)
		}
		if _, fresh, err := s.Begin(t.Context(), "pay_0123456789abcdef", "req-2", until, until.Add(time.Minute)); err != nil || !fresh {
			t.Errorf("Begin at the kept record's keep = %v, %v; want true", fresh, err)
		}
	})
	t.Run("Bytes", func(t *testing.T) {
		s := newStore(t)
		if _, _, err := s.Begin(t.Context(), "pay_0123456789abcdef", "req-1", now, until); err != nil {
			t.Fatal(err)
		}
		o := bytesOutcome()
		want := x402.PaymentIDRecord{Request: "req-1", Done: true, Response: o.Response, Settlement: o.Settlement}
		if err := s.Finish(t.Context(), "pay_0123456789abcdef", until, until, want); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.Begin(t.Context(), "pay_0123456789abcdef", "req-1", now.Add(time.Minute), until)
		if err != nil {
			t.Fatal(err)
		}
		// Compared exactly: a retry must get the bytes first sent.
		if diff := cmp.Diff(want.Response, got.Response); diff != "" {
			t.Errorf("response kept (-want +got):\n%s", diff)
		}
	})
	t.Run("Release", func(t *testing.T) {
		s := newStore(t)
		s.Begin(t.Context(), "pay_0123456789abcdef", "req-1", now, until)
		if err := s.Release(t.Context(), "pay_0123456789abcdef", until); err != nil {
			t.Fatal(err)
		}
		if _, fresh, err := s.Begin(t.Context(), "pay_0123456789abcdef", "req-2", now, until); err != nil || !fresh {
			t.Errorf("Begin after Release = %v, %v; want true", fresh, err)
		}
	})
	t.Run("LateFinishAndRelease", func(t *testing.T) {
		// The first request outlives its record; a second takes the id
		// over at its until. The first one's Finish and Release, late,
		// leave the second's record alone.
		s := newStore(t)
		const id = "pay_0123456789abcdef"
		second := until.Add(time.Hour)
		if _, fresh, err := s.Begin(t.Context(), id, "req-1", now, until); err != nil || !fresh {
			t.Fatalf("first Begin = %v, %v", fresh, err)
		}
		if _, fresh, err := s.Begin(t.Context(), id, "req-2", until, second); err != nil || !fresh {
			t.Fatalf("Begin at the first one's until = %v, %v; want true", fresh, err)
		}
		late := x402.PaymentIDRecord{Request: "req-1", Response: x402.BufferedResponse{Status: http.StatusOK, Body: []byte("late")}}
		if err := s.Finish(t.Context(), id, until, second.Add(time.Hour), late); err != nil {
			t.Fatal(err)
		}
		if err := s.Release(t.Context(), id, until); err != nil {
			t.Fatal(err)
		}
		r, fresh, err := s.Begin(t.Context(), id, "req-3", until.Add(time.Minute), second)
		if err != nil || fresh || r.Request != "req-2" || r.Done {
			t.Fatalf("Begin after the late Finish and Release = %+v, %v, %v; want the second request's record, running", r, fresh, err)
		}
		want := x402.PaymentIDRecord{Request: "req-2", Done: true, Response: x402.BufferedResponse{Status: http.StatusCreated, Body: []byte("second")}}
		if err := s.Finish(t.Context(), id, second, second.Add(time.Hour), want); err != nil {
			t.Fatal(err)
		}
		if err := s.Release(t.Context(), id, second); err != nil { // done: a Release frees nothing kept
			t.Fatal(err)
		}
		got, fresh, err := s.Begin(t.Context(), id, "req-2", until.Add(2*time.Minute), second)
		if err != nil || fresh {
			t.Fatalf("Begin after the second's Finish = %v, %v", fresh, err)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("record kept (-want +got):\n%s", diff)
		}
	})
	t.Run("Expired", func(t *testing.T) {
		s := newStore(t)
		s.Begin(t.Context(), "pay_0123456789abcdef", "req-1", now, now.Add(time.Minute))
		if _, fresh, err := s.Begin(t.Context(), "pay_0123456789abcdef", "req-2", now.Add(time.Minute), until); err != nil || !fresh {
			t.Errorf("Begin at the first one's until = %v, %v; want true", fresh, err)
		}
	})
	t.Run("ConcurrentBegin", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		var won atomic.Int32
		for range 8 {
			wg.Go(func() {
				_, fresh, err := s.Begin(t.Context(), "pay_0123456789abcdef", "req-1", now, until)
				if err != nil {
					t.Error(err)
				}
				if fresh {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		if won.Load() != 1 {
			t.Errorf("%d of 8 concurrent Begins reported true, want 1", won.Load())
		}
	})
}
