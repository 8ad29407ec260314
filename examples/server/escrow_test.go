package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The paid trust call offers auth-capture beside exact and upto, held in
// the offline escrow: a VALID claim is captured, and an INVALID one too
// (a definitive verdict is what the call sells),
// and the buyer's balance in the escrow, read from the demo endpoint, is
// where the verdicts say; an adaptive call captures the runs it launched.
func TestRun_trustCallInEscrow(t *testing.T) {
	t.Parallel()
	base, _, stop := startServer(t)
	defer stop()
	payer, err := evm.NewPayer(strings.Repeat("48", 32))
	if err != nil {
		t.Fatal(err)
	}
	balance := func() int64 { t.Helper(); return demoBalance(t, base, payer.Address().String()) }
	if got := balance(); got != escrowOpenBalance {
		t.Fatalf("the buyer starts with %d, want %d", got, escrowOpenBalance)
	}
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	spent := int64(0)
	for _, tc := range []struct {
		policy  trust.Policy
		claim   string
		status  trust.Status
		state   x402.EscrowState
		perRun  bool
		charged int64
	}{
		{trust.PolicyFast, "17 * 3 = 51", trust.StatusValid, x402.EscrowCaptured, false, 5000},
		{trust.PolicyFast, "17 * 3 = 52", trust.StatusInvalid, x402.EscrowCaptured, false, 5000},
		{trust.PolicyAdaptive, "17 * 3 = 51", trust.StatusValid, x402.EscrowCaptured, true, 0},
	} {
		body, _ := json.Marshal(map[string]any{"mode": "validation", "policy": tc.policy, "task": map[string]any{"type": "tool_output", "claimed_result": tc.claim}})
		resp, err := c.Post(base+trust.X402CallPath, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var out trust.Response
		if err := json.Unmarshal(data, &out); err != nil || resp.StatusCode != http.StatusOK || out.Status != tc.status {
			t.Fatalf("%s %q: %d %s", tc.policy, tc.claim, resp.StatusCode, data)
		}
		sr, err := x402.DecodeSettleResponse(resp.Header.Get(x402.HeaderPaymentResponse))
		if err != nil {
			t.Fatal(err)
		}
		e, ok := x402.EscrowFromSettlement(sr)
		charged := tc.charged
		if tc.perRun {
			charged = int64(1000 * out.Evidence.Launched)
		}
		if !ok || e.State != tc.state || e.Captured != strconv.FormatInt(charged, 10) {
			t.Errorf("%s %q: report %+v, want %s of %d", tc.policy, tc.claim, e, tc.state, charged)
		}
		spent += charged
		if got := balance(); got != escrowOpenBalance-spent {
			t.Errorf("%s %q: the buyer holds %d, want %d", tc.policy, tc.claim, got, escrowOpenBalance-spent)
		}
	}
}

// demoBalance reads address's balance on the demo's offline escrow
// (GET /x402/escrow/balance/{address}) of the server at base.
func demoBalance(t *testing.T, base, address string) int64 {
	t.Helper()
	resp, err := http.Get(base + "/x402/escrow/balance/" + address)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b escrowBalance
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("balance: %d, %v", resp.StatusCode, err)
	}
	n, _ := strconv.ParseInt(b.Balance, 10, 64)
	return n
}

// TestBalanceHandler_badAddress: an address that is not one is a 400
// problem with instance and request_id, like the library's routes.
func TestBalanceHandler_badAddress(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	handleGet(mux, escrowBalancePath, (&demoEscrow{}).balanceHandler())
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x402/escrow/balance/notanaddress", nil))
	var p problem.Details
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != http.StatusBadRequest {
		t.Fatalf("status %d, %s; want a 400 problem", rec.Code, rec.Body)
	}
	if p.Instance != "/x402/escrow/balance/notanaddress" || p.RequestID == "" || p.RequestID != rec.Header().Get("X-Request-Id") {
		t.Errorf("problem %+v, X-Request-Id %q: want instance and request_id", p, rec.Header().Get("X-Request-Id"))
	}
}
