package httpapi_test

import (
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/problem"
)

// TestServer_headersSentOnce: a request that sends Authorization or
// Content-Type twice, of which a proxy and the server could each read
// another copy, is refused before its work is prepared, even when both
// copies are right; sent once, the same request is served.
func TestServer_headersSentOnce(t *testing.T) {
	var prepared atomic.Int32
	prepare := func(r *http.Request, body []byte) (httpapi.Run, error) {
		prepared.Add(1)
		return echo(r, body)
	}
	srv := newServer(t, httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/things", Access: httpapi.Key, Prepare: prepare}}})
	bearer := "Bearer " + testKey
	for _, tt := range []struct {
		name      string
		headers   []string
		status    int
		detail    string
		challenge string
		errors    []problem.FieldError
	}{
		{"Authorization twice", []string{"Authorization", bearer, "Authorization", bearer}, 401,
			"the Authorization header is sent more than once: send one credential", `Bearer realm="vouch", error="invalid_request"`, nil},
		{"Authorization twice, one wrong", []string{"Authorization", bearer, "Authorization", "Bearer other"}, 401,
			"the Authorization header is sent more than once: send one credential", `Bearer realm="vouch", error="invalid_request"`, nil},
		{"Content-Type twice", []string{"Authorization", bearer, "Content-Type", "application/json"}, 400,
			"Content-Type is sent 2 times; send it once", "",
			[]problem.FieldError{{Field: "Content-Type", Rule: "unique", Message: "is sent 2 times; send it once"}}},
		{"Content-Encoding twice", []string{"Authorization", bearer, "Content-Encoding", "identity", "Content-Encoding", "identity"}, 400,
			"Content-Encoding is sent 2 times; send it once", "",
			[]problem.FieldError{{Field: "Content-Encoding", Rule: "unique", Message: "is sent 2 times; send it once"}}},
	} {
		got := send(t, "POST", srv.URL+"/things", `{"a":1}`, tt.headers...)
		p := got.problem(t)
		if got.status != tt.status || p.Detail != tt.detail || got.header.Get("WWW-Authenticate") != tt.challenge {
			t.Errorf("%s: %d %q, challenge %q; want %d %q, challenge %q", tt.name, got.status, p.Detail, got.header.Get("WWW-Authenticate"), tt.status, tt.detail, tt.challenge)
		}
		if diff := cmp.Diff(tt.errors, p.Errors); diff != "" {
			t.Errorf("%s: field errors (-want +got):\n%s", tt.name, diff)
		}
	}
	if n := prepared.Load(); n != 0 {
		t.Errorf("prepared %d requests, want none", n)
	}
	if got := send(t, "POST", srv.URL+"/things", `{"a":1}`, "Authorization", bearer); got.status != 200 || prepared.Load() != 1 {
		t.Errorf("sent once: %d %s, prepared %d; want 200, prepared once", got.status, got.body, prepared.Load())
	}
}

// TestOneHeader: a header's one value, "" when absent, and a 400 naming
// it, as its detail and its one field error, when it is sent more than
// once.
func TestOneHeader(t *testing.T) {
	for _, tt := range []struct {
		h    http.Header
		want string
		bad  *problem.Details
	}{
		{http.Header{}, "", nil},
		{http.Header{"X-Payment": {"a"}}, "a", nil},
		{http.Header{"X-Payment": {""}}, "", nil},
		{http.Header{"X-Payment": {"a", "a"}}, "", &problem.Details{
			Type: problem.TypePrefix + "invalid_request", Title: "Bad Request", Status: 400,
			Detail: "X-PAYMENT is sent 2 times; send it once", Code: problem.CodeInvalidRequest,
			Errors: []problem.FieldError{{Field: "X-PAYMENT", Rule: "unique", Message: "is sent 2 times; send it once"}},
		}},
	} {
		got, bad := httpapi.OneHeader(tt.h, "X-PAYMENT")
		if got != tt.want || !cmp.Equal(tt.bad, bad) {
			t.Errorf("OneHeader(%v) = %q, %v; want %q, %v", tt.h, got, bad, tt.want, tt.bad)
		}
	}
}

// TestServer_queryParameters: an endpoint that prepares its call from
// its body refuses every query parameter, each named, before the call is
// prepared, on POST and GET alike.
func TestServer_queryParameters(t *testing.T) {
	var prepared atomic.Int32
	prepare := func(r *http.Request, body []byte) (httpapi.Run, error) {
		prepared.Add(1)
		return echo(r, body)
	}
	srv := newServer(t, httpapi.Config{Endpoints: []httpapi.Endpoint{
		{Method: "POST", Path: "/things", Access: httpapi.Public, Prepare: prepare},
		{Method: "GET", Path: "/things", Access: httpapi.Public, Prepare: func(r *http.Request, _ []byte) (httpapi.Run, error) { return prepare(r, []byte("{}")) }},
	}})
	const message = "is not a parameter of this endpoint, which takes none"
	want := []problem.FieldError{{Field: "a", Rule: "unknown", Message: message}, {Field: "replicas", Rule: "unknown", Message: message}}
	for _, method := range []string{"POST", "GET"} {
		body := ""
		if method == "POST" {
			body = "{}"
		}
		got := send(t, method, srv.URL+"/things?replicas=5&a=1&a=2", body)
		if diff := cmp.Diff(want, got.problem(t).Errors); got.status != 400 || diff != "" {
			t.Errorf("%s with a query: %d, field errors (-want +got):\n%s", method, got.status, diff)
		}
		if got := send(t, method, srv.URL+"/things", body); got.status != 200 {
			t.Errorf("%s without a query: %d %s, want 200", method, got.status, got.body)
		}
	}
	if n := prepared.Load(); n != 2 {
		t.Errorf("prepared %d requests, want the 2 without a query", n)
	}
}

// TestServer_malformedQuery: a query that is not name=value pairs joined
// by "&" is refused, naming "(query)", rather than read as no query: a
// decoder that drops the pairs it cannot read would let ?replicas=5;
// through as absent.
func TestServer_malformedQuery(t *testing.T) {
	var prepared atomic.Int32
	srv := newServer(t, httpapi.Config{Endpoints: []httpapi.Endpoint{
		{Method: "POST", Path: "/things", Access: httpapi.Public, Prepare: func(r *http.Request, body []byte) (httpapi.Run, error) {
			prepared.Add(1)
			return echo(r, body)
		}},
	}})
	for _, query := range []string{"replicas=5;", "%zz", "a=%"} {
		got := send(t, "POST", srv.URL+"/things?"+query, "{}")
		var fields []string
		for _, e := range got.problem(t).Errors {
			fields = append(fields, e.Field+" "+e.Rule)
		}
		if got.status != 400 || !slices.Contains(fields, "(query) malformed") {
			t.Errorf("POST /things?%s: %d, field errors %q, want 400 naming (query), rule malformed", query, got.status, fields)
		}
	}
	if n := prepared.Load(); n != 0 {
		t.Errorf("prepared %d requests, want none", n)
	}
}
