package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
	"github.com/vouchkit/vouch/x402/x402test"
)

// A server with a durable escrow ledger finishes, before it serves, the
// payments an earlier run held and did not finish: the one whose VALID
// verdict was recorded is captured, the one without a verdict voided,
// and the chain's balances show it.
func TestNewServer_finishesEscrowsOfAnEarlierRun(t *testing.T) {
	dir := t.TempDir()
	args := []string{"-signing-key", filepath.Join(dir, "key.json"), "-escrow-ledger", filepath.Join(dir, "escrow.db")}
	t.Run("bbolt", func(t *testing.T) { testFinishesEscrowsOfAnEarlierRun(t, args) })
	t.Run("postgres", func(t *testing.T) {
		dbURL := databaseURL(t)
		testFinishesEscrowsOfAnEarlierRun(t, []string{"-signing-key", filepath.Join(dir, "key2.json"), "-database-url", dbURL, "-database-schema", freshSchema(t, dbURL)})
	})
}

func testFinishesEscrowsOfAnEarlierRun(t *testing.T, args []string) {
	ctx := context.Background()
	chain := &evm.Escrow{OpenBalance: big.NewInt(x402test.EscrowOpenBalance)} // outlives both runs
	start := func() *server {
		t.Helper()
		cfg, err := parseFlags(args, noEnv, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg.chain = chain
		s, err := newServer(ctx, cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// The earlier run: its offer, two holds on the chain recorded in its
	// ledger, one with a VALID verdict, and it stops before finishing.
	first := start()
	srv := httptest.NewServer(first.handler)
	body, _ := json.Marshal(map[string]any{"mode": "validation", "policy": trust.PolicyFast, "task": map[string]any{"type": "tool_output", "claimed_result": "17 * 3 = 51"}})
	resp, err := http.Post(srv.URL+trust.X402CallPath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := x402.ReadPaymentRequired(resp)
	resp.Body.Close()
	srv.Close()
	if err != nil {
		t.Fatal(err)
	}
	var offer x402.PaymentRequirements
	for _, o := range pr.Accepts {
		if o.Scheme == x402.SchemeAuthCapture && o.Extra["assetTransferMethod"] == evm.TransferEIP3009 {
			offer = o
		}
	}
	if offer.Scheme == "" {
		t.Fatalf("no auth-capture offer among %+v", pr.Accepts)
	}
	terms, err := evm.ParseAuthCaptureOffer(offer)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for n, verdict := range []string{"VALID", ""} {
		p, err := x402test.HoldEscrow(ctx, chain, offer, n)
		if err != nil {
			t.Fatal(err)
		}
		p.HeldAt = time.Now().Add(-time.Hour) // its work is long over
		if _, _, err := first.state.escrow.Hold(ctx, p); err != nil {
			t.Fatal(err)
		}
		if verdict != "" {
			if _, err := first.state.escrow.Decide(ctx, p.ID, verdict, p.Amount); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, p.ID)
	}
	payer, _ := first.state.escrow.Get(ctx, ids[0])
	who, _ := evm.ParseAddress(payer.Payer)
	balance := func(a evm.Address) int64 { return chain.Balance(terms.Token, a).Int64() }
	hold := terms.MaxAmount.Int64()
	if got, want := balance(who), int64(x402test.EscrowOpenBalance)-2*hold; got != want {
		t.Fatalf("the payer holds %d after two holds, want %d", got, want)
	}
	first.state.close()
	first.obs.close()

	// The next run, on the same ledger and signing key, finishes both
	// before it serves.
	next := start()
	defer next.obs.close()
	defer next.state.close()
	for i, want := range []x402.EscrowState{x402.EscrowCaptured, x402.EscrowVoided} {
		p, err := next.state.escrow.Get(ctx, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		if p.State != want {
			t.Errorf("payment %d is %s after the restart, want %s (operations %+v)", i, p.State, want, p.Operations)
		}
	}
	if got, want := balance(who), int64(x402test.EscrowOpenBalance)-hold; got != want {
		t.Errorf("the payer holds %d after the restart, want %d (one hold captured, one voided)", got, want)
	}
	if got := balance(terms.Receiver); got != int64(x402test.EscrowOpenBalance)+hold {
		t.Errorf("the receiver holds %d, want %d", got, x402test.EscrowOpenBalance+hold)
	}
}
