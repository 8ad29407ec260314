package receipt_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

// TestMemStore_bounds: beyond MaxRecords records or MaxBytes bytes,
// expired records are forgotten first, then the records stored first
// (Get answers ErrNotFound) while the latest stay, also after records
// expired and were deleted in between; every receipt stays a leaf of the
// log, and a record larger than MaxBytes is refused.
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
	// The model: the records held, in the order stored; beyond five, the
	// one expiring first goes (of two, the one stored first), never the
	// one just stored.
	var model []int
	expired := func(i int) bool { return i%3 == 0 } // some expire at once, the others live
	n := 0
	for range 100 {
		ttl := time.Hour
		if expired(n) {
			ttl = -time.Second
		}
		put(n, 10, ttl)
		model = append(model, n)
		if len(model) > 5 {
			first := slices.IndexFunc(model[:len(model)-1], expired) // not the one just stored
			if first < 0 {
				first = 0
			}
			model = slices.Delete(model, first, first+1)
		}
		n++
		if n%10 == 0 {
			if _, err := s.DeleteExpired(ctx, now); err != nil {
				t.Fatal(err)
			}
			model = slices.DeleteFunc(model, expired)
		}
	}
	for i := range n {
		if want := slices.Contains(model, i) && !expired(i); kept(i) != want {
			t.Errorf("record %d kept = %v, want %v (of the latest stored, expired ones go first)", i, kept(i), want)
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

// TestMemStore_ownersApart: one owner's receipts, however many, do not
// push out another owner's that holds fewer.
func TestMemStore_ownersApart(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &receipt.MemStore{MaxRecords: 10}
	put := func(owner string, i int) {
		t.Helper()
		rec := receipt.Record{ID: fmt.Sprint(owner, i), Data: []byte("{}"), Owner: owner, ExpiresAt: now.Add(time.Hour)}
		if err := s.Put(ctx, rec); err != nil {
			t.Fatalf("Put %s%d: %v", owner, i, err)
		}
	}
	put("bob", 0)
	put("bob", 1)
	for i := range 50 {
		put("alice", i)
	}
	for _, id := range []string{"bob0", "bob1", "alice49"} {
		if _, err := s.Get(ctx, id, now); err != nil {
			t.Errorf("Get(%s) after alice's 50 receipts in a store of 10: %v", id, err)
		}
	}
	if _, err := s.Get(ctx, "alice41", now); !errors.Is(err, receipt.ErrNotFound) {
		t.Errorf("Get(alice41) = %v; want ErrNotFound: alice's own oldest go", err)
	}
}

// TestMemStore_addressesOfOnePrefixAreOneOwner: receipts of anonymous
// callers named by IPv6 addresses of one /64 count as one owner's, so a
// machine that takes a new address for every call forgets its own, never
// bob's.
func TestMemStore_addressesOfOnePrefixAreOneOwner(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// An anonymous caller's receipts are owned by "ip:<address>", an
	// anonymous trial caller's by "trial:ip:<address>".
	for _, owner := range []string{"ip:2001:db8::%x", "trial:ip:2001:db8::%x"} {
		s := &receipt.MemStore{MaxRecords: 10}
		put := func(id, owner string) {
			t.Helper()
			if err := s.Put(ctx, receipt.Record{ID: id, Data: []byte("{}"), Owner: owner, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatalf("Put %s: %v", id, err)
			}
		}
		put("bob0", "bob")
		put("bob1", "bob")
		for i := range 50 {
			put(fmt.Sprint("v6-", i), fmt.Sprintf(owner, i+1))
		}
		for _, id := range []string{"bob0", "bob1", "v6-49"} {
			if _, err := s.Get(ctx, id, now); err != nil {
				t.Errorf("%s: Get(%s) after 50 receipts of one /64 in a store of 10: %v", owner, id, err)
			}
		}
		if _, err := s.Get(ctx, "v6-41", now); !errors.Is(err, receipt.ErrNotFound) {
			t.Errorf("%s: Get(v6-41) = %v; want ErrNotFound: the prefix's own oldest go", owner, err)
		}
	}
}

// TestMemStore_holdsNone: a MemStore whose MaxRecords holds no record
// refuses every Put, and leaves no leaf in the log for a receipt it does
// not keep.
func TestMemStore_holdsNone(t *testing.T) {
	ctx := context.Background()
	s := &receipt.MemStore{MaxRecords: -1}
	rec := receipt.Record{ID: "r1", Data: []byte(`{}`), Owner: "alice", ExpiresAt: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}
	if err := s.Put(ctx, rec); err == nil {
		t.Fatal("Put into a store that holds no record succeeded")
	}
	if n, err := s.LogSize(ctx); err != nil || n != 0 {
		t.Errorf("LogSize = %d, %v after a refused Put, want 0", n, err)
	}
}
