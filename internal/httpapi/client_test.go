package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/problem"
)

func TestClient_Do(t *testing.T) {
	var mu sync.Mutex
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		switch r.URL.Path {
		case "/raw":
			w.Write([]byte(`{"b": 2,  "a": 1}`))
		case "/missing":
			w.Header().Set("X-Request-Id", "req_9")
			w.WriteHeader(http.StatusNotFound)
		default:
			w.Write([]byte(`{}`))
		}
	}))
	defer srv.Close()
	c, err := httpapi.NewClient(httpapi.ClientConfig{Name: "test", BaseURL: srv.URL, UserAgent: "ua/1"})
	if err != nil {
		t.Fatal(err)
	}
	const trace = "0af7651916cd43dd8448eb211c80319c"
	ctx := traceparent.With(context.Background(), trace)

	// A GET sends no body, so no Content-Type and no Idempotency-Key; the
	// raw body reaches a *json.RawMessage byte for byte.
	var raw json.RawMessage
	if err := c.Do(ctx, httpapi.Call{Op: "get", Method: "GET", Path: "/raw", Header: http.Header{"Authorization": {"Bearer k"}}}, &raw); err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"b": 2,  "a": 1}` {
		t.Errorf("raw body %s, want the bytes as sent", raw)
	}
	if err := c.Do(ctx, httpapi.Call{Op: "post", Method: "POST", Path: "/post", Body: map[string]int{"x": 1}, IdempotencyKey: "key-1"}, nil); err != nil {
		t.Fatal(err)
	}
	err = c.Do(context.Background(), httpapi.Call{Op: "get", Method: "GET", Path: "/missing"}, nil)
	var p *problem.Details
	if !errors.As(err, &p) || p.Status != 404 || p.Code != problem.CodeNotFound || p.RequestID != "req_9" {
		t.Errorf("404 without a problem body: %v, want a 404 not_found problem with the request id", err)
	}

	type headers struct{ Auth, ContentType, Key, UA, TraceID string }
	view := func(h http.Header) headers {
		id, _, _ := traceparent.Parse(h.Get("traceparent"))
		return headers{h.Get("Authorization"), h.Get("Content-Type"), h.Get("Idempotency-Key"), h.Get("User-Agent"), id}
	}
	want := []headers{
		{"Bearer k", "", "", "ua/1", trace},
		{"", "application/json", "key-1", "ua/1", trace},
		{"", "", "", "ua/1", ""},
	}
	var views []headers
	for _, h := range got {
		views = append(views, view(h))
	}
	if diff := cmp.Diff(want, views); diff != "" {
		t.Errorf("request headers (-want +got):\n%s", diff)
	}
}

// TestNewClient_badURLHidesSecrets checks that the error of a base URL
// NewClient refuses shows neither its password nor its query.
func TestNewClient_badURLHidesSecrets(t *testing.T) {
	for _, u := range []string{
		"https://user:hunter2@example.com/v1?key=sekrit",
		"https://user:hunter2@example.com/v1#sekrit",
		"ftp://user:hunter2@example.com/?key=sekrit",
		"https://user:hunter2@exa mple.com/?key=sekrit",
	} {
		_, err := httpapi.NewClient(httpapi.ClientConfig{Name: "test", BaseURL: u})
		if err == nil {
			t.Errorf("NewClient(%s) = nil error, want one", u)
			continue
		}
		for _, secret := range []string{"hunter2", "sekrit"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("NewClient(%s): the error shows %q: %v", u, secret, err)
			}
		}
	}
}
