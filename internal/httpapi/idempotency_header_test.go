package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/problem"
)

// TestServer_idempotencyKeyHeader: an Idempotency-Key sent empty, more
// than once or malformed is a 400 naming the header in its detail and as
// its one field error, and the call does not run; it is never read as no
// key, nor as its first copy.
func TestServer_idempotencyKeyHeader(t *testing.T) {
	var runs atomic.Int64
	counted := func(r *http.Request, body []byte) (httpapi.Run, error) {
		return func(context.Context) (any, error) { runs.Add(1); return map[string]string{}, nil }, nil
	}
	srv := newServer(t, httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/call", Access: httpapi.Public, Prepare: counted}}})
	post := func(keys ...string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest("POST", srv.URL+"/call", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if keys != nil {
			req.Header["Idempotency-Key"] = keys
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	for _, tt := range []struct {
		name, rule string
		keys       []string
		message    string
	}{
		{"sent twice", "unique", []string{"dupA", "dupB"}, "is sent 2 times; send it once"},
		{"sent twice, the same", "unique", []string{"dupA", "dupA"}, "is sent 2 times; send it once"},
		{"empty", "required", []string{""}, "is empty; send 1 to 255 visible ASCII characters, or no Idempotency-Key header"},
		{"a space", "pattern", []string{"has space"}, "must be 1 to 255 visible ASCII characters"},
		{"too long", "pattern", []string{strings.Repeat("k", 256)}, "must be 1 to 255 visible ASCII characters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(tt.keys...)
			got := reply{resp.StatusCode, resp.Header, body}.problem(t)
			want := problem.Details{
				Type: problem.TypePrefix + "invalid_request", Title: "Bad Request", Status: 400, Detail: "Idempotency-Key " + tt.message,
				Instance: "/call", Code: problem.CodeInvalidRequest, RequestID: resp.Header.Get("X-Request-Id"),
				Errors: []problem.FieldError{{Field: "Idempotency-Key", Rule: tt.rule, Message: tt.message}},
			}
			if diff := cmp.Diff(want, got); diff != "" || want.RequestID == "" {
				t.Errorf("problem (-want +got):\n%s", diff)
			}
		})
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("the call ran %d times for refused keys", n)
	}
	// One key runs once and is replayed; no key runs each time.
	for i, want := range []string{"", "true"} {
		if resp, body := post("k1"); resp.StatusCode != 200 || resp.Header.Get("Idempotent-Replayed") != want {
			t.Errorf("key k1, request %d: %d %s, replayed %q; want 200, replayed %q", i, resp.StatusCode, body, resp.Header.Get("Idempotent-Replayed"), want)
		}
	}
	for range 2 {
		if resp, body := post(); resp.StatusCode != 200 {
			t.Errorf("no key: %d %s, want 200", resp.StatusCode, body)
		}
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("the call ran %d times, want 3", n)
	}
}
