package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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

func TestRun_healthWithoutCredentials(t *testing.T) {
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
