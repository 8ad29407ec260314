package pgstore_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/receipt/receipttest"
)

func TestReceiptStore(t *testing.T) {
	receipttest.TestStore(t, func(t *testing.T) receipt.Store { return openDB(t).Receipts() })
}

// A receipt issued and signed on one server is fetched on another with
// its exact bytes, verifies there, and receipt.Fetch applies the same
// visibility rules to it.
func TestReceiptStore_sharedAcrossServers(t *testing.T) {
	dbs := openDBs(t, 2)
	a, b := dbs[0].Receipts(), dbs[1].Receipts()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	issuer := &receipt.Issuer{Signer: signer, Store: a, Now: func() time.Time { return now }}
	issued, err := issuer.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: receipt.DeliveryInline, TTL: "7d", Visibility: receipt.VisibilityShared,
			Include: receipt.Include{InputHash: true, OutputHash: true}},
		Mode: "validation", TaskType: "summary", Input: "text to summarize", Output: "a summary",
		Status: "VALID", Confidence: 0.9, Reasons: []string{"replicas agree"},
		Owner: "key:alice", Counterparties: []string{"key:bob"},
	})
	if err != nil {
		t.Fatalf("Issue on server A = %v", err)
	}
	verifier, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		caller string
		found  bool
	}{
		{"key:alice", true},
		{"key:bob", true},
		{"key:mallory", false},
		{"", false},
	} {
		got, err := receipt.Fetch(context.Background(), b, issued.Receipt.ReceiptID, tc.caller, now.Add(time.Hour))
		if !tc.found {
			if !errors.Is(err, receipt.ErrNotFound) {
				t.Errorf("Fetch by %q on server B = %v, want ErrNotFound", tc.caller, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Fetch by %q on server B = %v, want the receipt", tc.caller, err)
		}
		if !bytes.Equal(got.Data, issued.JSON) {
			t.Errorf("Fetch by %q: data differs from the issued bytes:\n got %s\nwant %s", tc.caller, got.Data, issued.JSON)
		}
		res, err := verifier.Verify(got.Data, receipt.Originals{}, now.Add(time.Hour))
		if err != nil || !res.Valid() {
			t.Errorf("Verify of the receipt fetched on server B = %+v, %v; want valid", res, err)
		}
	}
	if _, err := receipt.Fetch(context.Background(), b, issued.Receipt.ReceiptID, "key:alice", issued.ExpiresAt); !errors.Is(err, receipt.ErrNotFound) {
		t.Errorf("Fetch at expiry on server B = %v, want ErrNotFound", err)
	}
}

// Two servers (two pools on one schema) appending at once form one log:
// every receipt is a leaf of its own, and the tree the stored hashes give
// is the tree of the leaves, with every proof checking.
func TestReceiptStore_logSharedAcrossServers(t *testing.T) {
	dbs := openDBs(t, 2)
	stores := []*pgstore.ReceiptStore{dbs[0].Receipts(), dbs[1].Receipts()}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const writers, each = 4, 15
	ids := make([]string, writers*each*len(stores))
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	for si, s := range stores {
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					n := (si*writers+w)*each + i
					id := fmt.Sprintf("rcpt_%026d", n)
					ids[n] = id
					if err := s.Put(context.Background(), receipt.Record{
						ID: id, Data: []byte(`{"receipt_id":"` + id + `"}`), Owner: "key:a",
						Visibility: receipt.VisibilityPrivate, ExpiresAt: now.Add(time.Hour),
					}); err != nil {
						errs <- err
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	receipttest.CheckLog(t, stores[1], int64(len(ids)), ids, now)
}
