package receipt_test

import (
	"context"
	"crypto/ed25519"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/receipt/receipttest"
)

// BenchmarkReceipt compares a whole receipt round (build, hash, sign,
// encode, store in memory, then parse and verify) with the raw Ed25519
// work on the same bytes: one ed25519.Sign and one ed25519.Verify of the
// signed message. Compare ns/op of the two sub-benchmarks; the target is
// a receipt rate of at least 0.7 times the raw rate.
func BenchmarkReceipt(b *testing.B) {
	s := newSigner(b, 1)
	v := newVerifier(b, []receipt.PublicKey{s.Public()})
	p := fullParams()
	is := &receipt.Issuer{Signer: s, Store: discardStore{}, Now: t0}

	b.Run("raw_ed25519", func(b *testing.B) {
		seed := make([]byte, ed25519.SeedSize)
		seed[0] = 1
		priv := ed25519.NewKeyFromSeed(seed)
		msg := issue(b, is, p).JSON // a message of the same size
		b.ReportAllocs()
		for b.Loop() {
			sig := ed25519.Sign(priv, msg)
			if !ed25519.Verify(priv.Public().(ed25519.PublicKey), msg, sig) {
				b.Fatal("raw signature did not verify")
			}
		}
	})
	b.Run("issue_and_verify", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := is.Issue(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := v.Verify(out.JSON, receipt.Originals{}, t0()); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReceiptRate runs the two halves of BenchmarkReceipt in turn
// within one loop, alternating which goes first, so that a machine whose
// speed drifts (shared cores) favours neither. It reports raw-ns/op and
// receipt-ns/op, and receipt-rate: the receipt rate as a fraction of the
// raw Ed25519 rate (raw time / receipt time), the target being 0.7.
func BenchmarkReceiptRate(b *testing.B) {
	s := newSigner(b, 1)
	v := newVerifier(b, []receipt.PublicKey{s.Public()})
	p := fullParams()
	is := &receipt.Issuer{Signer: s, Store: discardStore{}, Now: t0}
	seed := make([]byte, ed25519.SeedSize)
	seed[0] = 1
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	msg := issue(b, is, p).JSON // a message of the same size
	halves := [2]func(){
		func() {
			if !ed25519.Verify(pub, msg, ed25519.Sign(priv, msg)) {
				b.Fatal("raw signature did not verify")
			}
		},
		func() {
			out, err := is.Issue(context.Background(), p)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := v.Verify(out.JSON, receipt.Originals{}, t0()); err != nil {
				b.Fatal(err)
			}
		},
	}
	var spent [2]time.Duration
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		for k := range 2 {
			which := (i + k) % 2
			start := time.Now()
			halves[which]()
			spent[which] += time.Since(start)
		}
		i++
	}
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(i), "raw-ns/op")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(i), "receipt-ns/op")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "receipt-rate")
}

// discardStore keeps nothing, so that the benchmark measures the receipt
// work alone.
type discardStore struct{}

func (discardStore) Put(context.Context, receipt.Record) error { return nil }
func (discardStore) Get(context.Context, string, time.Time) (receipt.Record, error) {
	return receipt.Record{}, receipt.ErrNotFound
}
func (discardStore) DeleteExpired(context.Context, time.Time) (int, error) { return 0, nil }

// BenchmarkMemStore measures Put and Get of a 1 KiB record.
func BenchmarkMemStore(b *testing.B) {
	receipttest.BenchmarkStore(b, &receipt.MemStore{})
}
