package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestRun_trustedProxy: behind a proxy every request comes from the
// proxy's address. Without -trusted-proxy all callers share its trial
// bucket; with it, each client the proxy names has its own.
func TestRun_trustedProxy(t *testing.T) {
	t.Parallel()
	const body = `{"session_id":1,"claim":{"type":"tool_output","output":"2 + 2 = 4"}}`
	trial := func(t *testing.T, base, client string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+"/api/v2/trial/validate", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", client)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name  string
		args  []string
		codes []int // for clients A, A, B
	}{
		{"untrusted", nil, []int{200, 429, 429}},
		{"trusted", []string{"-trusted-proxy", "127.0.0.0/8"}, []int{200, 429, 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, _, _ := startServer(t, append([]string{"-trial-burst", "1", "-trial-rate", "0.001"}, tc.args...)...)
			var got []int
			for _, client := range []string{"198.51.100.7", "198.51.100.7", "203.0.113.9"} {
				got = append(got, trial(t, base, client))
			}
			for i := range got {
				if got[i] != tc.codes[i] {
					t.Fatalf("statuses for clients A, A, B = %v, want %v", got, tc.codes)
				}
			}
		})
	}
}
