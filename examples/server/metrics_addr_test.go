package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// metricsAlone is the banner line that names the -metrics-addr listener.
var metricsAlone = regexp.MustCompile(`(?m)^  metrics alone: (http://\S+/metrics) \(Prometheus\)$`)

// TestRun_metricsAddr: -metrics-addr serves /metrics, with the library's
// and the Go runtime's metrics, and nothing else; -debug-addr keeps its
// own /metrics, the same families.
func TestRun_metricsAddr(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-metrics-addr", "127.0.0.1:0", "-debug-addr", "127.0.0.1:0")
	m := metricsAlone.FindStringSubmatch(b.text)
	if m == nil {
		t.Fatalf("the banner names no -metrics-addr listener:\n%s", b.text)
	}
	metricsURL, debugMetrics := m[1], strings.TrimSuffix(b.debug, "/debug/vars")+"/metrics"
	if metricsURL == debugMetrics {
		t.Fatalf("-metrics-addr and -debug-addr share the address %s", metricsURL)
	}
	const v3 = `{"claim":{"type":"tool_output","output":"2 + 2 = 4"},"consensus":{"replicas":3}}`
	if resp := post(t, b.base+"/api/v3/validate", "", v3, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("v3 validate: %d", resp.StatusCode)
	}

	for _, u := range []string{metricsURL, debugMetrics} {
		fams := scrape(t, u)
		if got := labelled(fams["http_server_request_duration_seconds"], map[string]string{"http_route": "/api/v3/validate"}); len(got) != 1 {
			t.Errorf("%s: http_server_request_duration_seconds for the v3 validate = %v, want one series", u, got)
		}
		goroutines := fams["go_goroutines"]
		if goroutines.GetType() != dto.MetricType_GAUGE || len(goroutines.GetMetric()) != 1 || goroutines.GetMetric()[0].GetGauge().GetValue() < 1 {
			t.Errorf("%s: go_goroutines = %v, want a gauge of at least 1", u, goroutines)
		}
		for _, name := range []string{"go_memory_used_bytes", "go_memory_allocations_total", "go_config_gogc_percent"} {
			if fams[name] == nil {
				t.Errorf("%s: no %s", u, name)
			}
		}
	}

	for _, path := range []string{"/debug/vars", "/healthz", "/api/v1/ping"} {
		resp, err := http.Get(strings.TrimSuffix(metricsURL, "/metrics") + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s on -metrics-addr = %d, want 404", path, resp.StatusCode)
		}
	}
}

func TestRun_metricsAddrInUse(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-metrics-addr", "127.0.0.1:0")
	m := metricsAlone.FindStringSubmatch(b.text)
	if m == nil {
		t.Fatalf("the banner names no -metrics-addr listener:\n%s", b.text)
	}
	taken := strings.TrimSuffix(strings.TrimPrefix(m[1], "http://"), "/metrics")
	err := run(t.Context(), []string{"-addr", "127.0.0.1:0", "-metrics-addr", taken}, noEnv, new(strings.Builder), new(syncBuffer))
	if err == nil || !strings.HasPrefix(err.Error(), "-metrics-addr: ") {
		t.Errorf("run with a -metrics-addr in use = %v, want an error naming -metrics-addr", err)
	}
}
