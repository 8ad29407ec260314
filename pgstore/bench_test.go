package pgstore_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/receipt/boltstore"
	"github.com/vouchkit/vouch/receipt/receipttest"
	"github.com/vouchkit/vouch/router"
)

// benchReceipt is a receipt of a typical size (about 1 KiB).
// benchReceipt returns the i-th receipt of a benchmark run; run keeps the
// ids of one run apart from those of earlier runs on the same store (the
// PostgreSQL database outlives a run, and -count repeats them).
func benchReceipt(run string, i int) receipt.Record {
	id := fmt.Sprintf("rcpt_%s%016d", run, i)
	data := make([]byte, 1024)
	for j := range data {
		data[j] = 'a' + byte(j%26)
	}
	return receipt.Record{
		ID: id, Data: data, Owner: "key:alice", Visibility: receipt.VisibilityShared,
		Counterparties: []string{"key:bob"}, ExpiresAt: t0.Add(24 * time.Hour),
	}
}

// receiptStores returns the stores compared: in memory, the embedded
// bbolt file and PostgreSQL.
func receiptStores(b *testing.B) []struct {
	name string
	s    receipt.Store
} {
	bolt, err := boltstore.Open(filepath.Join(b.TempDir(), "receipts.db"), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { bolt.Close() })
	return []struct {
		name string
		s    receipt.Store
	}{
		{"memory", &receipt.MemStore{}},
		{"bbolt", bolt},
		{"postgres", openDB(b).Receipts()},
	}
}

func BenchmarkReceiptPut(b *testing.B) {
	for _, st := range receiptStores(b) {
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			run, i := rand.Text()[:10], 0
			for b.Loop() {
				if err := st.s.Put(context.Background(), benchReceipt(run, i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkReceiptGet(b *testing.B) {
	const n = 100
	run := rand.Text()[:10]
	for _, st := range receiptStores(b) {
		for i := range n {
			if err := st.s.Put(context.Background(), benchReceipt(run, i)); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := st.s.Get(context.Background(), benchReceipt(run, i%n).ID, t0); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkIdempotentCall measures the store's part of an idempotent
// call as the Handler makes it: Reserve and Complete for the first
// request, and one Reserve that replays for a repeat.
func BenchmarkIdempotentCall(b *testing.B) {
	resp := &router.StoredResponse{Status: 200, ContentType: "application/json", Body: make([]byte, 512)}
	for _, st := range []struct {
		name string
		s    router.IdempotencyStore
	}{
		{"memory", &router.MemoryIdempotencyStore{MaxEntries: 1 << 30, MaxEntriesPerCaller: 1 << 30}},
		{"postgres", openDB(b).Idempotency()},
	} {
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			run, i := rand.Text()[:10], 0
			for b.Loop() {
				key := fmt.Sprint("caller:", run, i)
				i++
				e, err := st.s.Reserve(ctx, key, "fp", t0, t0.Add(time.Hour))
				if err != nil || e.State != router.IdempotencyReserved {
					b.Fatalf("Reserve = %+v, %v", e, err)
				}
				if err := st.s.Complete(ctx, key, e.Lease, resp, t0); err != nil {
					b.Fatal(err)
				}
				if e, err := st.s.Reserve(ctx, key, "fp", t0, t0.Add(time.Hour)); err != nil || e.State != router.IdempotencyCompleted {
					b.Fatalf("replay Reserve = %+v, %v", e, err)
				}
			}
		})
	}
}

// BenchmarkTrialAllow measures one trial decision: the router's
// in-process token bucket against the shared one.
func BenchmarkTrialAllow(b *testing.B) {
	shared, err := openDB(b).TrialLimiter(router.TrialLimit{Rate: 1e6, Burst: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	memory, err := router.NewMemoryRateLimiter(router.TrialLimit{Rate: 1e6, Burst: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	for _, st := range []struct {
		name string
		l    router.RateLimiter
	}{
		{"memory", memory},
		{"postgres", shared},
	} {
		b.Run(st.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := st.l.Allow(context.Background(), "ip:192.0.2.1", t0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIssueLog compares receipt issuance on PostgreSQL with and
// without the transparency log (see receipttest.BenchmarkIssueLog).
func BenchmarkIssueLog(b *testing.B) {
	s := openDB(b).Receipts()
	receipttest.BenchmarkIssueLog(b, s, s.PutUnlogged)
}
