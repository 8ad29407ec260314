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
// issuance on a store. Each iteration issues two signed receipts (about
// 1 KiB), alternating which goes first: one through an Issuer whose Put is
// putUnlogged, the store's Put without the log, and one through the
// store's own Put, which appends the receipt to the log in the same
// transaction. Alternating within one loop keeps a drifting machine (a
// disk shared with other work) from favouring either. It reports
// nolog-ns/issue and log-ns/issue, and log-rate, the throughput with the
// log as a fraction of the throughput without it (nolog / log time).
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
	now := func() time.Time { return base() }
	issuers := [2]*receipt.Issuer{
		{Signer: signer, Store: unlogged{s, putUnlogged}, Now: now},
		{Signer: signer, Store: s, Now: now},
	}
	var spent [2]time.Duration
	ctx := context.Background()
	i := 0
	for b.Loop() {
		for k := range 2 {
			which := (i + k) % 2
			start := time.Now()
			if _, err := issuers[which].Issue(ctx, p); err != nil {
				b.Fatal(err)
			}
			spent[which] += time.Since(start)
		}
		i++
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(i), "nolog-ns/issue")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(i), "log-ns/issue")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "log-rate")
}

// unlogged is a store whose Put skips the log.
type unlogged struct {
	receipt.Store
	put func(context.Context, receipt.Record) error
}

func (u unlogged) Put(ctx context.Context, rec receipt.Record) error { return u.put(ctx, rec) }
