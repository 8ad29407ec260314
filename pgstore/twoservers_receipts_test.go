package pgstore_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
	"github.com/vouchkit/vouch/x402/x402test"
)

// Two issuers (one per server) append receipts over one pgstore log while
// both servers take checkpoints and prove inclusion: every checkpoint of
// one server is consistent with every later one of the other, every
// issued receipt's index is unique, the indexes are dense, and its
// inclusion proof from either server verifies.
func TestTwoServers_receiptLog(t *testing.T) {
	dbs := openDBs(t, 2)
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	var logs []*receipt.Log
	var issuers []*receipt.Issuer
	for _, db := range dbs {
		l, err := receipt.NewLog("vouch.example/log", signer, db.Receipts())
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, l)
		issuers = append(issuers, &receipt.Issuer{Signer: signer, Store: db.Receipts()})
	}
	ctx := context.Background()
	const each = 25
	var mu sync.Mutex
	var issued []*receipt.Issued
	var cps []receipt.Checkpoint
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range 2 {
		for range 2 {
			wg.Go(func() {
				for range each {
					is, err := issuers[i].Issue(ctx, receipt.Params{
						Request: receipt.Request{Mode: receipt.DeliveryInline, TTL: "7d", Visibility: receipt.VisibilityPrivate},
						Mode:    "validation", TaskType: "summary", Input: "in", Output: "out", Status: "VALID", Confidence: 0.9,
						Owner: "key:alice",
					})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					issued = append(issued, is)
					mu.Unlock()
				}
			})
		}
	}
	var readers sync.WaitGroup
	for i := range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				cp, _, err := logs[i].Checkpoint(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				cps = append(cps, cp)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	final, _, err := logs[0].Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if final.Size != int64(len(issued)) {
		t.Errorf("log size %d, want %d", final.Size, len(issued))
	}
	seen := map[int64]bool{}
	for _, is := range issued {
		rec, err := dbs[1].Receipts().Get(ctx, is.Receipt.ReceiptID, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if seen[rec.LogIndex] || rec.LogIndex < 0 || rec.LogIndex >= final.Size {
			t.Errorf("receipt %s has log index %d (dup or out of range)", is.Receipt.ReceiptID, rec.LogIndex)
		}
		seen[rec.LogIndex] = true
		for _, l := range logs {
			proof, cp, _, err := l.InclusionProof(ctx, rec.LogIndex)
			if err != nil {
				t.Fatal(err)
			}
			if err := receipt.CheckInclusion(rec.Data, rec.LogIndex, proof, cp); err != nil {
				t.Errorf("inclusion of %d: %v", rec.LogIndex, err)
			}
		}
	}
	for _, cp := range cps {
		if cp.Size > final.Size {
			t.Fatalf("checkpoint of size %d after final %d", cp.Size, final.Size)
		}
		proof, err := logs[1].ConsistencyProof(ctx, cp.Size, final.Size)
		if err != nil {
			t.Fatal(err)
		}
		if err := receipt.CheckConsistency(cp, final, proof); err != nil {
			t.Errorf("checkpoint %d inconsistent with %d: %v", cp.Size, final.Size, err)
		}
	}
	_ = tlog.HashSize
}

// Server A serves many "auth-capture" payments while server B runs its
// Recovery in a loop (with claims) over the shared ledger: no payment is
// both captured and voided, each is captured at most once, the money
// moved matches the ledger, and every payment ends captured.
func TestTwoServers_escrowRecoveryDuringCalls(t *testing.T) {
	dbs := openDBs(t, 2)
	bed := x402test.NewEscrowBed(t)
	counted := &countingEscrowSettles{Facilitator: bed.Facilitator}
	var srvs []*httptest.Server
	for _, db := range dbs {
		mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: counted, Replay: db.Replay(), Outcomes: db.Outcomes(),
			Escrow: &x402.EscrowConfig{Authorizer: bed.Authorizer, Ledger: db.Escrow()},
			Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{bed.Offer}}}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "Paris") })))
		t.Cleanup(srv.Close)
		srvs = append(srvs, srv)
	}
	before := bed.Balances()
	stop := make(chan struct{})
	var rec sync.WaitGroup
	for i := range 2 {
		r := &escrow.Recovery{Ledger: dbs[i].Escrow(), Facilitator: counted, Authorizer: bed.Authorizer}
		rec.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := r.Finish(context.Background()); err != nil {
					t.Errorf("Finish: %v", err)
				}
			}
		})
	}
	payer, _ := evm.NewPayer(testPayerKey)
	const n = 12
	var wg sync.WaitGroup
	var ids sync.Map
	for i := range n {
		wg.Go(func() {
			client := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
			resp, err := client.Post(srvs[i%2].URL+"/paid", "text/plain", strings.NewReader("q"))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			sr, _ := x402.DecodeSettleResponse(resp.Header.Get(x402.HeaderPaymentResponse))
			e, _ := x402.EscrowFromSettlement(sr)
			ids.Store(e.ID, resp.StatusCode)
		})
	}
	wg.Wait()
	close(stop)
	rec.Wait()
	captured := 0
	ids.Range(func(k, v any) bool {
		p, err := dbs[0].Escrow().Get(context.Background(), k.(string))
		if err != nil {
			t.Errorf("%s: %v", k, err)
			return true
		}
		var keys []string
		for _, o := range p.Operations {
			keys = append(keys, fmt.Sprintf("%s:%v", o.Key, o.Settlement.Success))
		}
		if p.State != x402.EscrowCaptured || len(p.Operations) != 1 || v.(int) != http.StatusOK {
			t.Errorf("payment %s: %s %v, answered %v", k, p.State, keys, v)
		}
		if p.State == x402.EscrowCaptured {
			captured++
		}
		return true
	})
	const hold = x402test.EscrowHoldAmount
	if got, want := bed.Balances(), before.Plus(-int64(captured)*hold, 0, int64(captured)*hold); got != want {
		t.Errorf("balances %+v, want %+v (%d captured)", got, want, captured)
	}
	if captured != n {
		t.Errorf("%d captured, want %d", captured, n)
	}
	t.Logf("captures sent %d, voids %d", counted.count("capture"), counted.count("void"))
	_ = errors.Is
}
