package main

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/problem"
)

// FuzzMCPRequest sends any body with any method, Content-Type and Accept
// to the MCP transport behind checkMCPRequest, as mountAgents serves it:
// a request refused for its method, Content-Type, Accept or JSON is
// answered with a problem of the API's routes, never the transport's
// plain-text refusal of them; the transport answers in plain text only
// a JSON body that is not a message it serves (400), and never panics.
func FuzzMCPRequest(f *testing.F) {
	const both = "application/json, text/event-stream"
	for _, s := range []struct{ method, contentType, accept, body string }{
		{"POST", "application/json", both, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"POST", "application/json; charset=UTF-8", "*/*", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"POST", "application/json", both, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"POST", "application/json", both, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`},
		{"POST", "application/json", both, `{}`},
		{"POST", "application/json", both, `1`},
		{"POST", "application/json", both, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"POST", "application/json", both, `{"a":1,"a":2}`},
		{"POST", "application/json", "application/*;q=0, text/*", `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{"POST", "application/vnd.api+json", both, `{}`},
		{"POST", "", both, `{}`},
		{"POST", "application/json", "", `{}`},
		{"GET", "", "text/event-stream", ``},
		{"DELETE", "", both, ``},
	} {
		f.Add(s.method, s.contentType, s.accept, []byte(s.body))
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "fuzz", Version: "v0"}, nil)
	h := checkMCPRequest(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	f.Fuzz(func(t *testing.T, method, contentType, accept string, body []byte) {
		if method != http.MethodGet && method != http.MethodDelete {
			method = http.MethodPost
		}
		r := httptest.NewRequest(method, mcpPath, bytes.NewReader(body))
		for name, v := range map[string]string{"Content-Type": contentType, "Accept": accept} {
			if v != "" && !strings.ContainsAny(v, "\r\n\x00") {
				r.Header.Set(name, v)
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		ct, _, _ := mime.ParseMediaType(w.Header().Get("Content-Type"))
		switch {
		case ct == problem.ContentType && w.Code >= 400 && w.Code < 500:
		case ct == "application/json" && w.Code == http.StatusOK:
		case w.Code == http.StatusAccepted && w.Body.Len() == 0:
		case ct == "text/plain" && w.Code == http.StatusBadRequest && json.Valid(body) &&
			!strings.Contains(w.Body.String(), "Content-Type") && !strings.Contains(w.Body.String(), "Accept"):
			// the transport's refusal of a JSON value that is not a
			// JSON-RPC message it serves
		default:
			t.Fatalf("%s with Content-Type %q, Accept %q, body %q: %d %q %q",
				method, r.Header.Get("Content-Type"), r.Header.Get("Accept"), body, w.Code, w.Header().Get("Content-Type"), w.Body)
		}
	})
}
