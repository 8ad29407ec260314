package main

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestRun_metricsLint serves a mix of traffic (the API's routes, made-up
// methods and paths, MCP tool calls, a payment refused) and lints /metrics
// on -metrics-addr and -debug-addr with promlint, the linter of
// promtool check metrics: no problem, no empty label, and the /mcp
// requests counted in the HTTP server metrics.
func TestRun_metricsLint(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-metrics-addr", "127.0.0.1:0", "-debug-addr", "127.0.0.1:0", "-mcp-paid")
	m := metricsAlone.FindStringSubmatch(b.text)
	if m == nil {
		t.Fatalf("the banner names no -metrics-addr listener:\n%s", b.text)
	}
	const v3 = `{"claim":{"type":"tool_output","output":"2 + 2 = 4"},"consensus":{"replicas":3}}`
	post(t, b.base+"/api/v3/validate", "", v3, nil)
	post(t, b.base+"/api/v4/trust", "", `{"mode":"validation","policy":"fast","task":{"claimed_result":"17 * 3 = 51"}}`, nil)
	post(t, b.base+"/api/v1/x402/validate", "", `{"claim":"2 + 2 = 4"}`, nil)
	for _, method := range []string{"FOO", "BAR"} {
		request(t, method, b.base+"/api/v3/validate", "")
		request(t, method, b.base+"/no/such/path/"+method, "")
	}
	mcpPost(t, b.base, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	mcpPost(t, b.base, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_receipt","arguments":{"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"}}}`)
	mcpPost(t, b.base, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"validate_claim","arguments":{"claimed_result":"17 * 3 = 51"}}}`)

	for _, u := range []string{m[1], strings.TrimSuffix(b.debug, "/debug/vars") + "/metrics"} {
		text := request(t, http.MethodGet, u, "")
		problems, err := promlint.New(bytes.NewReader(text)).Lint()
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s: %s", u, p.Metric, p.Text)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(bytes.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range fams {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetValue() == "" {
						t.Errorf("%s: %s has the empty label %s", u, name, l.GetName())
					}
				}
			}
		}
		if got := labelled(fams["http_server_request_duration_seconds"], map[string]string{"http_route": "/mcp", "http_request_method": "POST"}); len(got) == 0 {
			t.Errorf("%s: no /mcp requests in http_server_request_duration_seconds", u)
		}
		if got := labelled(fams["mcp_server_operation_duration_seconds"], map[string]string{"gen_ai_tool_name": "get_receipt", "mcp_method_name": "tools/call"}); len(got) != 1 {
			t.Errorf("%s: mcp_server_operation_duration_seconds for get_receipt = %v, want one series", u, got)
		}
		for _, method := range []string{"FOO", "BAR"} {
			if got := labelled(fams["http_server_request_duration_seconds"], map[string]string{"http_request_method": method}); len(got) != 0 {
				t.Errorf("%s: the made-up method %s has series of its own", u, method)
			}
		}
	}
}

// request makes a request without a body and returns the answer's body.
func request(t *testing.T, method, url, auth string) []byte {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return body
}

// mcpPost sends one JSON-RPC message to /mcp with the demo key.
func mcpPost(t *testing.T, base, msg string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+mcpPath, strings.NewReader(msg))
	req.Header.Set("Authorization", "Bearer "+defaultAPIKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /mcp %s: %d", msg, resp.StatusCode)
	}
}
