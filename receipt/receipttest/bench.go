package receipttest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

// BenchmarkIssueLog measures what the transparency log costs receipt
// issuance on a store: "no_log" issues signed receipts (about 1 KiB)
// through an Issuer whose Put is putUnlogged, the store's Put without the
// log; "log" through the store's own Put, which appends each receipt to
// the log in the same transaction. Compare the ns/op of the two.
func BenchmarkIssueLog(b *testing.B, s receipt.Store, putUnlogged func(context.Context, receipt.Record) error) {
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize)))
	if err != nil {
		b.Fatal(err)
	}
	p := receipt.Params{
		Request:    receipt.Inline(),
		Mode:       "validation",
		TaskType:   "summary",
		Input:      "What is the capital of France?",
		Output:     "Paris",
		Status:     "VALID",
		Confidence: 0.9,
		Reasons:    []string{"agreement 1.00 over 3 replicas (3 spent in all)", "consistent", "grounded"},
		Policy:     &receipt.PolicySnapshot{Tier: "safe", Consensus: receipt.PolicyConsensus{Replicas: 3, Strategy: "majority"}},
		Consensus: &receipt.ConsensusSnapshot{Replicas: 3, Agreement: 1, Verdicts: []string{"VALID", "VALID", "VALID"},
			Strategy: "majority", Confidence: 0.9},
		Refs:  &receipt.Refs{Sessions: []int64{1, 3, 5}, Tasks: []string{"t-1", "t-2", "t-3"}, RouterTraceIDs: []string{"4bf92f3577b34da6a3ce929d0e0e4736"}},
		Owner: "key:alice",
	}
	for _, c := range []struct {
		name  string
		store receipt.Store
	}{
		{"no_log", unlogged{s, putUnlogged}},
		{"log", s},
	} {
		is := &receipt.Issuer{Signer: signer, Store: c.store, Now: func() time.Time { return base() }}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := is.Issue(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// unlogged is a store whose Put skips the log.
type unlogged struct {
	receipt.Store
	put func(context.Context, receipt.Record) error
}

func (u unlogged) Put(ctx context.Context, rec receipt.Record) error { return u.put(ctx, rec) }
