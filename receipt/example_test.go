package receipt_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/vouchkit/vouch/receipt"
)

// An Issuer records a decision; a Verifier that trusts the issuer's key
// checks it, here against the original input as well.
func Example() {
	signer, _ := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)))
	issuer := &receipt.Issuer{
		Signer:      signer,
		Store:       &receipt.MemStore{},
		Environment: receipt.TestEnvironment(),
	}
	issued, err := issuer.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{
			Mode:       receipt.DeliveryInline,
			Include:    receipt.Include{InputHash: true, OutputHash: true},
			TTL:        "30d",    // more than the test environment allows
			Visibility: "public", // a future mode
		},
		Mode:       "validation",
		TaskType:   "summary",
		Input:      "Summarize the refund policy.",
		Output:     "Refunds within 30 days with the receipt.",
		Status:     "VALID",
		Confidence: 0.93,
		Reasons:    []string{"consistent"},
		Owner:      "shop-42",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("effective:", issued.Receipt.TTL, issued.Receipt.Visibility)

	verifier, _ := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	res, err := verifier.Verify(issued.JSON, receipt.Originals{
		Input: json.RawMessage(`"Summarize the refund policy."`),
	}, time.Now())
	for _, c := range res.Checks {
		fmt.Println(c.Name, c.Status)
	}
	fmt.Println("error:", err)
	// Output:
	// effective: 7d shared
	// schema passed
	// signature passed
	// key_window passed
	// input_hash passed
	// output_hash skipped
	// expiry passed
	// error: <nil>
}

// A receipt changed after signing fails with ErrBadSignature.
func ExampleVerifier_Verify_tampered() {
	signer, _ := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)))
	issuer := &receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}}
	issued, _ := issuer.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: receipt.DeliveryInline},
		Mode:    "validation", Status: "INVALID", Confidence: 0.8, Owner: "shop-42",
	})
	forged := strings.Replace(string(issued.JSON), `"INVALID"`, `"VALID"`, 1)

	verifier, _ := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	_, err := verifier.Verify([]byte(forged), receipt.Originals{}, time.Now())
	fmt.Println(errors.Is(err, receipt.ErrBadSignature))
	// Output:
	// true
}

// Hash hashes the JSON value: a string with its quotes (the hash below is
// `printf '"hi"' | sha256sum`), an object with its members sorted.
func ExampleHash() {
	a, _ := receipt.Hash(map[string]any{"b": 2, "a": 1})
	b, _ := receipt.HashJSON([]byte(`{ "a": 1, "b": 2 }`))
	s, _ := receipt.Hash("hi")
	fmt.Println(a == b)
	fmt.Println(s)
	// Output:
	// true
	// sha256:b49177e05868b7af8e82a644c1ce20e521af46497adeaffe861d294d9b4bb75e
}

// The production environment caps ttl at 90 days and narrows public to
// shared.
func ExampleEnvironment_Clamp() {
	terms, _ := receipt.ProductionEnvironment().Clamp(receipt.Request{TTL: "365d", Visibility: "public"})
	fmt.Println(terms.TTL(), terms.Visibility, terms.Clamped)
	// Output:
	// 90d shared true
}

// The Handler serves receipts to their owner and hides them from others.
func ExampleHandler() {
	store := &receipt.MemStore{}
	issuer := &receipt.Issuer{Store: store}
	issued, _ := issuer.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: receipt.DeliveryDetached},
		Mode:    "delegation", Status: "VALID", Confidence: 1, Owner: "shop-42",
	})
	h := &receipt.Handler{
		Store:  store,
		Caller: func(r *http.Request) (string, error) { return r.Header.Get("X-Integration"), nil },
	}
	for _, caller := range []string{"shop-42", "shop-7", ""} {
		req := httptest.NewRequest("GET", receipt.ReceiptPath+issued.Receipt.ReceiptID, nil)
		req.Header.Set("X-Integration", caller)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Printf("%q: %d\n", caller, rec.Code)
	}
	// Output:
	// "shop-42": 200
	// "shop-7": 404
	// "": 401
}

// A store keeps every receipt in its transparency log; a Log signs
// checkpoints of it and proves that a receipt is in it, which anyone with
// the public key checks offline.
func ExampleNewLog() {
	signer, _ := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)))
	store := &receipt.MemStore{}
	issuer := &receipt.Issuer{Signer: signer, Store: store}
	var last *receipt.Issued
	for _, status := range []string{"VALID", "INVALID", "VALID"} {
		var err error
		last, err = issuer.Issue(context.Background(), receipt.Params{
			Request: receipt.Request{Mode: receipt.DeliveryInline}, Mode: "validation",
			Status: status, Confidence: 0.9, Owner: "shop-42",
		})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	log, _ := receipt.NewLog("example.com/vouch/receipts", signer, store)

	// What the service serves: the receipt's leaf, its proof and the
	// signed checkpoint of the tree the proof leads to.
	rec, _ := store.Get(context.Background(), last.Receipt.ReceiptID, time.Now())
	proof, _, signed, _ := log.InclusionProof(context.Background(), rec.LogIndex)

	// What a verifier does, offline, with the log's verifier key.
	cp, err := receipt.OpenCheckpoint(signed, log.VerifierKey())
	fmt.Println("checkpoint:", cp.Origin, cp.Size, err)
	fmt.Println("inclusion of leaf", rec.LogIndex, receipt.CheckInclusion(last.JSON, rec.LogIndex, proof, cp))
	fmt.Println("verifier key:", strings.SplitN(log.VerifierKey(), "+", 2)[0])
	// Output:
	// checkpoint: example.com/vouch/receipts 3 <nil>
	// inclusion of leaf 2 <nil>
	// verifier key: example.com/vouch/receipts
}
