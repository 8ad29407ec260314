package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The x402 trust call charges adaptive by the runs it launched, with the
// upto scheme, and a fast call its fixed price; -facilitator serves the
// offline facilitator, which lists upto with its address.
func TestRun_adaptivePaysPerRun(t *testing.T) {
	t.Parallel()
	base, _, stop := startServer(t, "-facilitator")
	defer stop()
	payer, err := evm.NewPayer(strings.Repeat("47", 32))
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeExact, x402.SchemeUpto}}}}
	for _, tc := range []struct {
		policy  trust.Policy
		perRun  bool
		fixedAt string
	}{{trust.PolicyAdaptive, true, ""}, {trust.PolicyFast, false, "5000"}} {
		body, _ := json.Marshal(map[string]any{"mode": "validation", "policy": tc.policy, "task": map[string]any{"input": "What is the capital of France?", "claimed_result": "Paris"}})
		resp, err := c.Post(base+trust.X402CallPath, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var out trust.Response
		if err := json.Unmarshal(data, &out); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.policy, resp.StatusCode, data)
		}
		sr, err := x402.SettlementFromResponse(resp)
		if err != nil {
			t.Fatal(err)
		}
		u, hasUsage := x402.UsageFromSettlement(sr)
		switch {
		case tc.perRun && (!hasUsage || u.Units != uint64(out.Evidence.Launched) || u.MaxAmount != 5000 || sr.Amount != strconv.Itoa(1000*out.Evidence.Launched)):
			t.Errorf("adaptive: launched %d, settled %s, usage %+v", out.Evidence.Launched, sr.Amount, u)
		case !tc.perRun && (hasUsage || sr.Amount != tc.fixedAt):
			t.Errorf("%s: settled %s, usage %v; want the fixed %s", tc.policy, sr.Amount, hasUsage, tc.fixedAt)
		}
	}
	a, err := x402.FacilitatorAddress(t.Context(), &x402.FacilitatorClient{URL: base + "/x402/facilitator"}, "eip155:84532")
	if err != nil || a != evm.OfflineFacilitatorAddress {
		t.Errorf("the served facilitator's upto address = %q, %v", a, err)
	}
}
