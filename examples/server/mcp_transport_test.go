package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
)

// TestRun_mcpTransportRefusals: a request the MCP transport refuses, for
// its method, Content-Type or Accept, is answered with the problem of the
// API's routes, where the SDK would answer in plain text; one that
// carries what the official clients send is served.
func TestRun_mcpTransportRefusals(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t)
	const (
		jsonType = "application/json"
		both     = "application/json, text/event-stream"
		list     = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	)
	type answer struct {
		Status      int
		ContentType string
		Allow       string
		Code        problem.Code
		Detail      string // a part of it
	}
	for _, c := range []struct {
		name, method, contentType, accept string
		want                              answer
	}{
		{"GET", http.MethodGet, "", "text/event-stream",
			answer{http.StatusMethodNotAllowed, problem.ContentType, "POST", problem.CodeMethodNotAllowed, "use POST"}},
		{"DELETE", http.MethodDelete, "", both,
			answer{http.StatusMethodNotAllowed, problem.ContentType, "POST", problem.CodeMethodNotAllowed, "use POST"}},
		{"no Content-Type", http.MethodPost, "", both,
			answer{http.StatusUnsupportedMediaType, problem.ContentType, "", problem.CodeUnsupportedMediaType, "Content-Type must be application/json"}},
		{"latin1", http.MethodPost, "application/json; charset=latin1", both,
			answer{http.StatusUnsupportedMediaType, problem.ContentType, "", problem.CodeUnsupportedMediaType, "Content-Type must be application/json"}},
		{"+json", http.MethodPost, "application/vnd.api+json", both,
			answer{http.StatusUnsupportedMediaType, problem.ContentType, "", problem.CodeUnsupportedMediaType, "Content-Type must be application/json"}},
		{"no Accept", http.MethodPost, jsonType, "",
			answer{http.StatusBadRequest, problem.ContentType, "", problem.CodeInvalidRequest, "Accept must list both application/json and text/event-stream"}},
		{"Accept JSON alone", http.MethodPost, jsonType, jsonType,
			answer{http.StatusBadRequest, problem.ContentType, "", problem.CodeInvalidRequest, "Accept must list both application/json and text/event-stream"}},
		{"official client", http.MethodPost, jsonType, both,
			answer{Status: http.StatusOK, ContentType: jsonType}},
		{"UTF-8 and any type", http.MethodPost, "application/json; charset=UTF-8", "*/*",
			answer{Status: http.StatusOK, ContentType: jsonType}},
	} {
		var body *strings.Reader
		if c.method == http.MethodPost {
			body = strings.NewReader(list)
		} else {
			body = strings.NewReader("")
		}
		req, _ := http.NewRequest(c.method, base+mcpPath, body)
		if c.contentType != "" {
			req.Header.Set("Content-Type", c.contentType)
		}
		if c.accept != "" {
			req.Header.Set("Accept", c.accept)
		}
		req.Header.Set("Authorization", "Bearer demo-key")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p problem.Details
		decodeErr := json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		got := answer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Allow: resp.Header.Get("Allow"), Code: p.Code}
		if c.want.Detail != "" && strings.Contains(p.Detail, c.want.Detail) {
			got.Detail = c.want.Detail
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: answer (-want +got):\n%s(detail %q, decoding: %v)", c.name, diff, p.Detail, decodeErr)
		}
		if c.want.Code != "" && (resp.Header.Get("X-Request-Id") == "" || p.RequestID != resp.Header.Get("X-Request-Id")) {
			t.Errorf("%s: X-Request-Id %q, request_id %q; want the id in both", c.name, resp.Header.Get("X-Request-Id"), p.RequestID)
		}
	}
}
