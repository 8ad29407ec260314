package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// scrape reads url in the Prometheus text format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d", url, resp.StatusCode)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return families
}

// labelled returns the metrics of family f whose labels include want.
func labelled(f *dto.MetricFamily, want map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		ok := true
		for k, v := range want {
			ok = ok && have[k] == v
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

func TestRun_prometheusMetrics(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-debug-addr", "127.0.0.1:0")
	metricsURL := strings.TrimSuffix(b.debug, "/debug/vars") + "/metrics"
	if !strings.Contains(b.text, metricsURL) {
		t.Errorf("the banner does not name %s:\n%s", metricsURL, b.text)
	}
	const v3 = `{"claim":{"type":"tool_output","output":"2 + 2 = 4"},"consensus":{"replicas":3},"policy":{"tier":"safe"}}`
	var out struct{ Verdict string }
	if resp := post(t, b.base+"/api/v3/validate", "", v3, &out); resp.StatusCode != http.StatusOK {
		t.Fatalf("v3 validate: %d", resp.StatusCode)
	}

	fams := scrape(t, metricsURL)
	dur := fams["http_server_request_duration_seconds"]
	if dur.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("http_server_request_duration_seconds is %v, want a histogram (families: %d)", dur.GetType(), len(fams))
	}
	got := labelled(dur, map[string]string{"http_route": "/api/v3/validate", "http_request_method": "POST", "http_response_status_code": "200"})
	if len(got) != 1 || got[0].GetHistogram().GetSampleCount() != 1 {
		t.Errorf("http_server_request_duration_seconds for the v3 validate = %v, want one request", got)
	}
	runs := labelled(fams["vouch_router_runs_total"], map[string]string{"vouch_tier": "safe", "vouch_run_outcome": "answered"})
	var answered float64
	for _, m := range runs {
		answered += m.GetCounter().GetValue()
	}
	if answered < 2 {
		t.Errorf("vouch_router_runs_total answered in tier safe = %v, want at least 2 of 3", answered)
	}
	if n := len(fams["vouch_worker_duration_seconds"].GetMetric()); n < 2 {
		t.Errorf("vouch_worker_duration_seconds has %d sessions, want each replica's", n)
	}
	if calls := labelled(fams["vouch_calls_total"], map[string]string{"http_route": "/api/v3/validate", "vouch_variant": "normal"}); len(calls) != 1 {
		t.Errorf("vouch_calls_total for the v3 validate = %v", calls)
	}
}

// TestRun_everyMetricFamily makes one call of every kind (a trust call
// with a receipt, a paid one, a trial one over its limit, a replayed
// idempotent one, a refused payment) and checks that /metrics holds every
// family docs/OBSERVABILITY.md lists, under the name it gives.
func TestRun_everyMetricFamily(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-debug-addr", "127.0.0.1:0", "-trial-burst", "1", "-trial-rate", "0.01")
	ctx := context.Background()
	tc := trustClient(t, b.base, defaultAPIKey)
	if _, err := tc.Call(ctx, validation(receipt.Request{Mode: receipt.DeliveryInline})); err != nil {
		t.Fatal(err)
	}
	const v3 = `{"claim":{"type":"tool_output","output":"2 + 2 = 4"},"consensus":{"replicas":3}}`
	post(t, b.base+"/api/v3/validate", "idem-1", v3, nil)
	post(t, b.base+"/api/v3/validate", "idem-1", v3, nil)
	for range 2 { // the second is over the trial limit
		resp, err := http.Post(b.base+"/api/v2/trial/validate", "application/json",
			strings.NewReader(`{"session_id":1,"claim":{"type":"tool_output","output":"1 + 1 = 2"}}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	payer, err := evm.NewPayer(strings.Repeat("47", 32))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{MaxAmount: 10000}}}
	paid := trustClient(t, b.base, "", trust.WithClientVariant(router.VariantX402), trust.WithHTTPClient(hc))
	if _, err := paid.Call(ctx, validation(receipt.Request{})); err != nil {
		t.Fatal(err)
	}

	fams := scrape(t, strings.TrimSuffix(b.debug, "/debug/vars")+"/metrics")
	for _, name := range []string{
		"http_server_request_duration_seconds", "vouch_calls_total", "vouch_trial_decisions_total",
		"vouch_idempotency_decisions_total", "vouch_router_runs_launched_total", "vouch_router_runs_total",
		"vouch_worker_duration_seconds", "vouch_consensus_agreement", "vouch_consensus_confidence",
		"vouch_trust_calls_total", "vouch_trust_runs", "vouch_x402_payments_total", "vouch_x402_refusals_total",
		"vouch_receipts_issued_total",
	} {
		if fams[name] == nil {
			t.Errorf("/metrics has no %s", name)
		}
	}
	settled := labelled(fams["vouch_x402_payments_total"], map[string]string{"vouch_payment_step": "settle", "vouch_payment_result": "success"})
	if len(settled) != 1 || settled[0].GetCounter().GetValue() != 1 {
		t.Errorf("settled payments = %v, want 1", settled)
	}
	if refused := labelled(fams["vouch_x402_refusals_total"], map[string]string{"vouch_payment_reason": "payment_required"}); len(refused) != 1 {
		t.Errorf("refusals for a missing payment = %v, want the first paid request's 402", refused)
	}
	if limited := labelled(fams["vouch_trial_decisions_total"], map[string]string{"vouch_decision": "limited"}); len(limited) != 1 {
		t.Errorf("trial decisions limited = %v, want one", limited)
	}
	if replayed := labelled(fams["vouch_idempotency_decisions_total"], map[string]string{"vouch_decision": "replayed"}); len(replayed) != 1 {
		t.Errorf("idempotency decisions replayed = %v, want one", replayed)
	}
}

func TestRun_healthWithoutCredentials(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t)
	for _, path := range []string{"/healthz", "/readyz"} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, base+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s without credentials = %d, want 200", path, resp.StatusCode)
		}
	}
}
