package trusta2a_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestHandler_bodyNotJSON: a request whose body is not JSON as sent (its
// Content-Type another, its content coded) is a 415 naming what to send,
// as on the HTTP routes, before any JSON-RPC is read; JSON with a UTF-8
// charset is served.
func TestHandler_bodyNotJSON(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	const body = `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`
	for _, tc := range []struct {
		name                string
		contentType, coding string
		status              int
		header, value       string // a header the answer carries
	}{
		{name: "text", contentType: "text/plain", status: http.StatusUnsupportedMediaType, header: "Accept-Post", value: "application/json"},
		{name: "none", status: http.StatusUnsupportedMediaType, header: "Accept-Post", value: "application/json"},
		{name: "gzip", contentType: "application/json", coding: "gzip", status: http.StatusUnsupportedMediaType, header: "Accept-Encoding", value: "identity"},
		{name: "json", contentType: "application/json; charset=utf-8", status: http.StatusOK, header: "Content-Type", value: "application/json"},
	} {
		req, _ := http.NewRequest(http.MethodPost, f.url+"/a2a", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer demo-key")
		req.Header.Set("A2A-Version", "1.0")
		if tc.contentType != "" {
			req.Header.Set("Content-Type", tc.contentType)
		}
		if tc.coding != "" {
			req.Header.Set("Content-Encoding", tc.coding)
		}
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.HasPrefix(resp.Header.Get(tc.header), tc.value) {
			t.Errorf("%s: %s with %s %q, want %d with %s %q", tc.name, resp.Status, tc.header, resp.Header.Get(tc.header), tc.status, tc.header, tc.value)
		}
	}
}
