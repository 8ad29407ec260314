// Package receipttest checks implementations of receipt.Store: one suite
// that the in-memory store, the bbolt store and any other store run alike.
package receipttest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/receipt"
)

// base is the instant the suite treats as now; record expiries are set
// around it in whole milliseconds.
func base() time.Time { return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC) }

// TestStore runs the conformance suite against stores made by newStore,
// which is called once per subtest and must return an empty store; close
// it with t.Cleanup. The suite checks that:
//
//   - a record comes back with its exact bytes and every field (expiry
//     compared to the microsecond, empty and nil lists alike);
//   - an unknown id (even one that is not valid UTF-8 or holds a NUL,
//     which no record has), and a record at or after its expiry, are
//     ErrNotFound;
//   - a second Put of an id is ErrDuplicate and keeps the first record;
//   - an incomplete record is refused, and so is one whose expiry lies
//     outside the years 1 to 9999;
//   - neither the caller's slices nor returned slices alias stored data;
//   - DeleteExpired removes exactly the expired records and counts them;
//   - a done context is reported before any work;
//   - concurrent Puts and Gets are safe (run it with -race);
//   - for a store that keeps a log (a receipt.LogReader): every Put
//     appends its record's data as the next leaf and no failed Put
//     does, Get reports the leaf index, the stored hashes give the same
//     tree as a reference built from the data, and inclusion proofs from
//     the store check against it, also after concurrent Puts.
func TestStore(t *testing.T, newStore func(t *testing.T) receipt.Store) {
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, newStore(t)) })
	t.Run("NotFound", func(t *testing.T) { notFound(t, newStore(t)) })
	t.Run("Expiry", func(t *testing.T) { expiry(t, newStore(t)) })
	t.Run("Duplicate", func(t *testing.T) { duplicate(t, newStore(t)) })
	t.Run("Incomplete", func(t *testing.T) { incomplete(t, newStore(t)) })
	t.Run("NoAliasing", func(t *testing.T) { noAliasing(t, newStore(t)) })
	t.Run("DeleteExpired", func(t *testing.T) { deleteExpired(t, newStore(t)) })
	t.Run("ContextDone", func(t *testing.T) { contextDone(t, newStore(t)) })
	t.Run("Concurrent", func(t *testing.T) { concurrent(t, newStore(t)) })
	t.Run("Log", func(t *testing.T) {
		s := newStore(t)
		if _, ok := s.(receipt.LogReader); !ok {
			t.Skip("the store keeps no log")
		}
		logAppends(t, s)
	})
	t.Run("LogConcurrent", func(t *testing.T) {
		s := newStore(t)
		if _, ok := s.(receipt.LogReader); !ok {
			t.Skip("the store keeps no log")
		}
		concurrent(t, s)
		ids := make([]string, 40)
		for i := range ids {
			ids[i] = record(i, time.Hour).ID
		}
		CheckLog(t, s, 40, ids, base())
	})
}

func logAppends(t *testing.T, s receipt.Store) {
	ctx := context.Background()
	var recs []receipt.Record
	for i := range 9 {
		rec := record(i, time.Hour)
		mustPut(t, s, rec)
		recs = append(recs, rec)
		if err := s.Put(ctx, rec); !errors.Is(err, receipt.ErrDuplicate) {
			t.Fatalf("second Put(%s) = %v, want ErrDuplicate", rec.ID, err)
		}
		if err := s.Put(ctx, receipt.Record{ID: "rcpt_x"}); err == nil {
			t.Fatal("Put of an incomplete record succeeded")
		}
		got, err := s.Get(ctx, rec.ID, base())
		if err != nil || got.LogIndex != int64(i) {
			t.Fatalf("Get(%s).LogIndex = %d (%v), want %d: one leaf per Put, in order", rec.ID, got.LogIndex, err, i)
		}
	}
	ids := make([]string, len(recs))
	for i, rec := range recs {
		ids[i] = rec.ID
	}
	CheckLog(t, s, int64(len(recs)), ids, base())
	// A sweep removes records, never leaves.
	if _, err := s.DeleteExpired(ctx, base().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.(receipt.LogReader).LogSize(ctx); err != nil || n != int64(len(recs)) {
		t.Errorf("LogSize after a sweep = %d (%v), want %d", n, err, len(recs))
	}
}

// record returns a complete record with id n, expiring ttl after the
// suite's base() time.
func record(n int, ttl time.Duration) receipt.Record {
	return receipt.Record{
		ID:             fmt.Sprintf("rcpt_%026d", n),
		Data:           []byte(fmt.Sprintf(`{"receipt_id":"rcpt_%026d","note":"<&> é"}`, n)),
		Owner:          "owner-a",
		Visibility:     receipt.VisibilityShared,
		Counterparties: []string{"party-b", "party-c"},
		ExpiresAt:      base().Add(ttl),
	}
}

// cmpRecord compares records as the Store contract promises them.
func cmpRecord() cmp.Options {
	return cmp.Options{
		cmpopts.EquateEmpty(),
		cmpopts.IgnoreFields(receipt.Record{}, "LogIndex"),
		cmp.Comparer(func(a, b time.Time) bool { return a.Truncate(time.Microsecond).Equal(b.Truncate(time.Microsecond)) }),
	}
}

func mustPut(t *testing.T, s receipt.Store, rec receipt.Record) {
	t.Helper()
	if err := s.Put(context.Background(), rec); err != nil {
		t.Fatalf("Put(%s) = %v, want nil", rec.ID, err)
	}
}

func roundTrip(t *testing.T, s receipt.Store) {
	ctx := context.Background()
	want := record(1, time.Hour)
	private := record(2, 48*time.Hour)
	private.Visibility, private.Counterparties = receipt.VisibilityPrivate, nil
	for _, rec := range []receipt.Record{want, private} {
		mustPut(t, s, rec)
		got, err := s.Get(ctx, rec.ID, base())
		if err != nil {
			t.Fatalf("Get(%s) = %v, want the record", rec.ID, err)
		}
		if diff := cmp.Diff(rec, got, cmpRecord()); diff != "" {
			t.Errorf("Get(%s) mismatch (-want +got):\n%s", rec.ID, diff)
		}
	}
}

func notFound(t *testing.T, s receipt.Store) {
	mustPut(t, s, record(1, time.Hour))
	// An id no record can have (Record.Validate refuses it) is unknown
	// too, not an error of the store's.
	for _, id := range []string{record(2, 0).ID, "", "rcpt_", "rcpt_\xff", "rcpt_\x00"} {
		if _, err := s.Get(context.Background(), id, base()); !errors.Is(err, receipt.ErrNotFound) {
			t.Errorf("Get(%q) error = %v, want ErrNotFound", id, err)
		}
	}
}

func expiry(t *testing.T, s receipt.Store) {
	// An expiry in whole milliseconds, as the Issuer writes it, is kept
	// to the millisecond at least.
	ms := record(2, time.Hour+999*time.Millisecond)
	mustPut(t, s, ms)
	if _, err := s.Get(context.Background(), ms.ID, ms.ExpiresAt.Add(-time.Millisecond)); err != nil {
		t.Errorf("Get a millisecond before an expiry at .999 = %v, want the record: its expiry was not kept to the millisecond", err)
	}
	if _, err := s.Get(context.Background(), ms.ID, ms.ExpiresAt); !errors.Is(err, receipt.ErrNotFound) {
		t.Errorf("Get at an expiry at .999 = %v, want ErrNotFound", err)
	}
	rec := record(1, time.Hour)
	mustPut(t, s, rec)
	for _, tc := range []struct {
		now  time.Time
		live bool
	}{
		{base(), true},
		{rec.ExpiresAt.Add(-time.Millisecond), true},
		{rec.ExpiresAt, false},
		{rec.ExpiresAt.Add(time.Millisecond), false},
		{rec.ExpiresAt.Add(1000 * time.Hour), false},
	} {
		_, err := s.Get(context.Background(), rec.ID, tc.now)
		if tc.live && err != nil {
			t.Errorf("Get at expiry%+v = %v, want the record", tc.now.Sub(rec.ExpiresAt), err)
		}
		if !tc.live && !errors.Is(err, receipt.ErrNotFound) {
			t.Errorf("Get at expiry%+v = %v, want ErrNotFound", tc.now.Sub(rec.ExpiresAt), err)
		}
	}
}

func duplicate(t *testing.T, s receipt.Store) {
	first := record(1, time.Hour)
	mustPut(t, s, first)
	second := first
	second.Data, second.Owner = []byte(`{"other":true}`), "intruder"
	if err := s.Put(context.Background(), second); !errors.Is(err, receipt.ErrDuplicate) {
		t.Fatalf("second Put = %v, want ErrDuplicate", err)
	}
	got, err := s.Get(context.Background(), first.ID, base())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, got, cmpRecord()); diff != "" {
		t.Errorf("after a refused duplicate, record mismatch (-want +got):\n%s", diff)
	}
}

func incomplete(t *testing.T, s receipt.Store) {
	n := 0
	for name, mutate := range map[string]func(*receipt.Record){
		"no id":     func(r *receipt.Record) { r.ID = "" },
		"no data":   func(r *receipt.Record) { r.Data = nil },
		"no owner":  func(r *receipt.Record) { r.Owner = "" },
		"no expiry": func(r *receipt.Record) { r.ExpiresAt = time.Time{} },
		// Expiries no store can keep alike: bbolt's microseconds since
		// 1970 overflow past the year 294246, PostgreSQL's timestamptz
		// ends in 294276.
		"expiry after the year 9999": func(r *receipt.Record) { r.ExpiresAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"expiry in the year 300000":  func(r *receipt.Record) { r.ExpiresAt = time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"expiry before the year 1":   func(r *receipt.Record) { r.ExpiresAt = time.Date(0, 12, 31, 0, 0, 0, 0, time.UTC) },
		// Names no store can keep as given: PostgreSQL's text refuses
		// them, and a store that writes JSON would change them.
		"id not UTF-8":           func(r *receipt.Record) { r.ID += "\xff" },
		"id with NUL":            func(r *receipt.Record) { r.ID += "\x00" },
		"owner not UTF-8":        func(r *receipt.Record) { r.Owner = "owner-\xff" },
		"owner with NUL":         func(r *receipt.Record) { r.Owner = "owner-\x00a" },
		"counterparty not UTF-8": func(r *receipt.Record) { r.Counterparties = []string{"party-\xff"} },
		"counterparty with NUL":  func(r *receipt.Record) { r.Counterparties = []string{"party-\x00b"} },
	} {
		n++ // one id each, so that no refusal is a duplicate's
		rec := record(n, time.Hour)
		mutate(&rec)
		if err := s.Put(context.Background(), rec); err == nil {
			t.Errorf("Put(%s) = nil, want an error", name)
		}
	}
}

func noAliasing(t *testing.T, s receipt.Store) {
	rec := record(1, time.Hour)
	want := record(1, time.Hour)
	mustPut(t, s, rec)
	rec.Data[2] = 'X'
	rec.Counterparties[0] = "changed"
	got, err := s.Get(context.Background(), want.ID, base())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpRecord()); diff != "" {
		t.Fatalf("changing Put's slices changed the store (-want +got):\n%s", diff)
	}
	got.Data[2] = 'Y'
	got.Counterparties[0] = "changed"
	again, err := s.Get(context.Background(), want.ID, base())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again, cmpRecord()); diff != "" {
		t.Errorf("changing Get's slices changed the store (-want +got):\n%s", diff)
	}
}

func deleteExpired(t *testing.T, s receipt.Store) {
	ctx := context.Background()
	ttls := []time.Duration{time.Minute, time.Hour, time.Hour, 2 * time.Hour, 24 * time.Hour}
	for i, ttl := range ttls {
		mustPut(t, s, record(i, ttl))
	}
	if n, err := s.DeleteExpired(ctx, base()); err != nil || n != 0 {
		t.Fatalf("DeleteExpired(base()) = %d, %v; want 0, nil", n, err)
	}
	// At base()+1h the records expiring at +1m and at +1h (twice) are expired.
	n, err := s.DeleteExpired(ctx, base().Add(time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("DeleteExpired(base()+1h) = %d, %v; want 3, nil", n, err)
	}
	for i, ttl := range ttls {
		// Looking up at base(), before any expiry, tells swept from kept.
		_, err := s.Get(ctx, record(i, ttl).ID, base())
		if swept := ttl <= time.Hour; swept != errors.Is(err, receipt.ErrNotFound) {
			t.Errorf("record %d (ttl %v) after sweep: Get = %v; swept = %v", i, ttl, err, swept)
		}
	}
	if n, err := s.DeleteExpired(ctx, base().Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("repeated DeleteExpired = %d, %v; want 0, nil", n, err)
	}
	if n, err := s.DeleteExpired(ctx, base().Add(1000*time.Hour)); err != nil || n != 2 {
		t.Errorf("DeleteExpired(far future) = %d, %v; want 2, nil", n, err)
	}
}

func contextDone(t *testing.T, s receipt.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := record(1, time.Hour)
	if err := s.Put(ctx, rec); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a done context = %v, want context.Canceled", err)
	}
	if _, err := s.Get(context.Background(), rec.ID, base()); !errors.Is(err, receipt.ErrNotFound) {
		t.Errorf("Put with a done context stored the record: Get = %v", err)
	}
	if _, err := s.Get(ctx, rec.ID, base()); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a done context = %v, want context.Canceled", err)
	}
	if _, err := s.DeleteExpired(ctx, base()); !errors.Is(err, context.Canceled) {
		t.Errorf("DeleteExpired with a done context = %v, want context.Canceled", err)
	}
}

func concurrent(t *testing.T, s receipt.Store) {
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*2)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				rec := record(w*each+i, time.Hour)
				if err := s.Put(context.Background(), rec); err != nil {
					errs <- err
					continue
				}
				if _, err := s.Get(context.Background(), rec.ID, base()); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Go(func() {
		for range each {
			if _, err := s.DeleteExpired(context.Background(), base()); err != nil {
				errs <- err
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i := range writers * each {
		if _, err := s.Get(context.Background(), record(i, time.Hour).ID, base()); err != nil {
			t.Errorf("record %d missing after concurrent writes: %v", i, err)
		}
	}
}

// BenchmarkStore measures s: "put" stores a new 1 KiB record per
// iteration, "get" reads one live record. Records expire an hour after
// the suite's base time, so s should be empty or a fresh store.
func BenchmarkStore(b *testing.B, s receipt.Store) {
	ctx := context.Background()
	data := make([]byte, 1024)
	newRecord := func() receipt.Record {
		return receipt.Record{ID: receipt.NewID(), Data: data, Owner: "owner-a", Visibility: receipt.VisibilityPrivate, ExpiresAt: base().Add(time.Hour)}
	}
	b.Run("put", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Put(ctx, newRecord()); err != nil {
				b.Fatal(err)
			}
		}
	})
	rec := newRecord()
	if err := s.Put(ctx, rec); err != nil {
		b.Fatal(err)
	}
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Get(ctx, rec.ID, base()); err != nil {
				b.Fatal(err)
			}
		}
	})
}
