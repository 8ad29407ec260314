package receipt_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

// TestMemStore_bounds: beyond MaxRecords records or MaxBytes bytes, the
// records stored first are forgotten (Get answers ErrNotFound) while the
// latest stay, also after records expired and were deleted in between;
// every receipt stays a leaf of the log, and a record larger than
// MaxBytes is refused.
func TestMemStore_bounds(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &receipt.MemStore{MaxRecords: 5, MaxBytes: 400}
	put := func(i int, size int, ttl time.Duration) {
		t.Helper()
		rec := receipt.Record{ID: fmt.Sprint("r", i), Data: make([]byte, size), Owner: "alice", ExpiresAt: now.Add(ttl)}
		if err := s.Put(ctx, rec); err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
	}
	kept := func(i int) bool {
		_, err := s.Get(ctx, fmt.Sprint("r", i), now)
		if err != nil && !errors.Is(err, receipt.ErrNotFound) {
			t.Fatal(err)
		}
		return err == nil
	}
	n := 0
	for range 100 { // some expire at once, the others live
		ttl := time.Hour
		if n%3 == 0 {
			ttl = -time.Second
		}
		put(n, 10, ttl)
		n++
		if n%10 == 0 {
			if _, err := s.DeleteExpired(ctx, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range n {
		if want := i >= n-5 && i%3 != 0; kept(i) != want {
			t.Errorf("record %d kept = %v, want %v (the live ones of the latest five stored: expired ones count until deleted)", i, kept(i), want)
		}
	}
	put(n, 100, time.Hour)
	put(n+1, 100, time.Hour)
	put(n+2, 100, time.Hour)
	put(n+3, 100, time.Hour) // 400 bytes with these four: the records of 10 bytes go
	if kept(n-2) || !kept(n) || !kept(n+3) {
		t.Errorf("after 400 bytes more: r%d kept %v, r%d %v, r%d %v; want false, true, true", n-2, kept(n-2), n, kept(n), n+3, kept(n+3))
	}
	if size, err := s.LogSize(ctx); err != nil || size != int64(n+4) {
		t.Errorf("LogSize = %d, %v; want every receipt stored, %d", size, err, n+4)
	}
	if err := s.Put(ctx, receipt.Record{ID: "big", Data: make([]byte, 401), Owner: "alice", ExpiresAt: now.Add(time.Hour)}); err == nil {
		t.Error("a record larger than MaxBytes was stored")
	}
}
