package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// serveFrom serves one request to h as if it came from the peer remote,
// with headers as name, value pairs.
func serveFrom(h http.Handler, remote, body string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/trial", strings.NewReader(body))
	req.RemoteAddr = remote
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

func newTrialServer(t *testing.T, cfg httpapi.Config) *httpapi.Server {
	t.Helper()
	cfg.Endpoints = []httpapi.Endpoint{{Method: "POST", Path: "/trial", Access: httpapi.Trial, Prepare: echo}}
	s, err := httpapi.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// callerOf returns the caller the endpoint saw.
func callerOf(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct{ Caller string }
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("%d %s: %v", w.Code, w.Body, err)
	}
	return body.Caller
}

// TestServer_trustedProxyKeepsCallersApart: behind a reverse proxy every
// request comes from the proxy's address. With the proxy trusted, its
// clients are told apart by the address it names, so that one client
// reusing another's Idempotency-Key does not get the other's answer; a
// client that is not a trusted proxy cannot name another address.
func TestServer_trustedProxyKeepsCallersApart(t *testing.T) {
	s := newTrialServer(t, httpapi.Config{
		TrialLimit:     httpapi.TrialLimit{Rate: rate.Inf},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")},
	})
	const proxy = "10.0.0.7:51000"
	a := serveFrom(s, proxy, `{"n":1}`, "Idempotency-Key", "k", "X-Forwarded-For", "198.51.100.1")
	if a.Code != http.StatusOK || callerOf(t, a) != "ip:198.51.100.1" {
		t.Fatalf("client a: %d, caller %q; want 200 and ip:198.51.100.1", a.Code, callerOf(t, a))
	}
	b := serveFrom(s, proxy, `{"n":1}`, "Idempotency-Key", "k", "X-Forwarded-For", "198.51.100.2")
	if b.Header().Get(httpapi.HeaderIdempotentReplayed) != "" || callerOf(t, b) != "ip:198.51.100.2" {
		t.Errorf("client b reusing a's key: replayed %q, caller %q; want its own answer", b.Header().Get(httpapi.HeaderIdempotentReplayed), callerOf(t, b))
	}
	again := serveFrom(s, proxy, `{"n":1}`, "Idempotency-Key", "k", "X-Forwarded-For", "198.51.100.1")
	if again.Header().Get(httpapi.HeaderIdempotentReplayed) != "true" || callerOf(t, again) != "ip:198.51.100.1" {
		t.Errorf("client a's retry: replayed %q, caller %q; want a's kept answer", again.Header().Get(httpapi.HeaderIdempotentReplayed), callerOf(t, again))
	}

	for _, tc := range []struct {
		name, remote string
		headers      []string
		want         string
	}{
		{"untrusted peer naming another address", "192.0.2.9:1", []string{"X-Forwarded-For", "198.51.100.1"}, "ip:192.0.2.9"},
		{"chain of trusted proxies", proxy, []string{"X-Forwarded-For", "203.0.113.5, 10.1.1.1"}, "ip:203.0.113.5"},
		{"client-supplied hop before the proxy's", proxy, []string{"X-Forwarded-For", "198.51.100.66, 203.0.113.5"}, "ip:203.0.113.5"},
		{"Forwarded header", proxy, []string{"Forwarded", `for="[2001:db8::1]:4711";proto=https`}, "ip:2001:db8::1"},
		// A proxy that appends to one header may pass the other through
		// as the client wrote it: two headers that disagree name no one.
		{"Forwarded and X-Forwarded-For disagree", proxy, []string{"Forwarded", "for=203.0.113.9", "X-Forwarded-For", "198.51.100.1"}, "ip:10.0.0.7"},
		{"X-Forwarded-For and Forwarded disagree", proxy, []string{"X-Forwarded-For", "198.51.100.1", "Forwarded", "for=203.0.113.9"}, "ip:10.0.0.7"},
		{"Forwarded and X-Forwarded-For agree", proxy, []string{"Forwarded", "for=203.0.113.9", "X-Forwarded-For", "198.51.100.66, 203.0.113.9"}, "ip:203.0.113.9"},
		{"unknown hop stops at the proxy", proxy, []string{"Forwarded", "for=unknown"}, "ip:10.0.0.7"},
		// Commas, semicolons and for= inside a quoted value are its text.
		{"comma in a quoted host", proxy, []string{"Forwarded", `for=203.0.113.5;host="x,for=198.51.100.1";proto=https`}, "ip:203.0.113.5"},
		{"semicolon in a quoted host", proxy, []string{"Forwarded", `for=203.0.113.5;host="x;for=198.51.100.1"`}, "ip:203.0.113.5"},
		{"escaped quote in a quoted host", proxy, []string{"Forwarded", `for=203.0.113.5;host="x\",for=198.51.100.1"`}, "ip:203.0.113.5"},
		{"quoted for with a port", proxy, []string{"Forwarded", `for="203.0.113.5:4711", for="[2001:db8::1]:80"`}, "ip:2001:db8::1"},
		// A line whose elements cannot be told apart names no one.
		{"unterminated quote", proxy, []string{"Forwarded", `for="198.51.100.1, for=203.0.113.5`}, "ip:10.0.0.7"},
		{"text after a quoted value", proxy, []string{"Forwarded", `for="203.0.113.5"198.51.100.1`}, "ip:10.0.0.7"},
		{"two for in one element", proxy, []string{"Forwarded", `for=203.0.113.5;for=198.51.100.1`}, "ip:10.0.0.7"},
		{"a client's bad line before the proxy's", proxy, []string{"Forwarded", `for="198.51.100.1`, "Forwarded", "for=203.0.113.5"}, "ip:203.0.113.5"},
		{"no header", proxy, nil, "ip:10.0.0.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := callerOf(t, serveFrom(s, tc.remote, `{}`, tc.headers...)); got != tc.want {
				t.Errorf("caller = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestServer_trialLimitGroupsIPv6: the addresses of one IPv6 /64 share
// one trial bucket, so rotating through them does not dodge the limit;
// another /64 has its own.
func TestServer_trialLimitGroupsIPv6(t *testing.T) {
	s := newTrialServer(t, httpapi.Config{TrialLimit: httpapi.TrialLimit{Rate: rate.Every(time.Hour), Burst: 2}})
	for i, remote := range []string{"[2001:db8:0:1::1]:1", "[2001:db8:0:1::2]:1", "[2001:db8:0:1:ffff::3]:1"} {
		want := http.StatusOK
		if i == 2 {
			want = http.StatusTooManyRequests
		}
		if w := serveFrom(s, remote, `{}`); w.Code != want {
			t.Errorf("call %d from %s: %d, want %d", i+1, remote, w.Code, want)
		}
	}
	if w := serveFrom(s, "[2001:db8:0:2::1]:1", `{}`); w.Code != http.StatusOK {
		t.Errorf("another /64: %d, want 200", w.Code)
	}
	// A /48 grouping puts both in one bucket.
	s48 := newTrialServer(t, httpapi.Config{TrialLimit: httpapi.TrialLimit{Rate: rate.Every(time.Hour), Burst: 1, IPv6Prefix: 48}})
	serveFrom(s48, "[2001:db8:0:1::1]:1", `{}`)
	if w := serveFrom(s48, "[2001:db8:0:2::1]:1", `{}`); w.Code != http.StatusTooManyRequests {
		t.Errorf("same /48 with IPv6Prefix 48: %d, want 429", w.Code)
	}
}

// TestServer_trialNewCallersNotLockedOut: once the limiter tracks
// MaxCallers callers, a new caller's first call is still served.
func TestServer_trialNewCallersNotLockedOut(t *testing.T) {
	s := newTrialServer(t, httpapi.Config{TrialLimit: httpapi.TrialLimit{Rate: rate.Every(time.Hour), Burst: 1, MaxCallers: 2}})
	for _, ip := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4", "192.0.2.5"} {
		if w := serveFrom(s, ip+":1", `{}`); w.Code != http.StatusOK {
			t.Errorf("first call of %s: %d, want 200", ip, w.Code)
		}
	}
}

// TestServer_paidIdempotencyScopedByPayer: on a paid route the
// idempotency scope is the payer Config.Payer names, not the address: a
// second payer reusing the first one's key from the same address gets its
// own answer, and a payer retrying from another address gets its kept one.
func TestServer_paidIdempotencyScopedByPayer(t *testing.T) {
	type payerKey struct{}
	// The paywall names the payer of the X-Test-Payer header.
	paywall := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), payerKey{}, r.Header.Get("X-Test-Payer"))))
		})
	}
	s, err := httpapi.NewServer(httpapi.Config{
		X402:      paywall,
		Payer:     func(r *http.Request) string { p, _ := r.Context().Value(payerKey{}).(string); return p },
		Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/paid", Access: httpapi.Paid, Prepare: echo}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ payer, remote, caller, replayed string }{
		{"0xAbC", "192.0.2.1:1", "payer:0xabc", ""},
		{"0xDeF", "192.0.2.1:1", "payer:0xdef", ""},
		{"0xabc", "198.51.100.9:1", "payer:0xabc", "true"},
	} {
		req := newPost("/paid", `{"n":1}`)
		req.RemoteAddr = tc.remote
		req.Header.Set("Idempotency-Key", "shared")
		req.Header.Set("X-Test-Payer", tc.payer)
		w := serve(s, req)
		if w.Code != http.StatusOK || callerOf(t, w) != tc.caller || w.Header().Get(httpapi.HeaderIdempotentReplayed) != tc.replayed {
			t.Errorf("payer %s from %s: %d, caller %q, replayed %q; want 200, %q, replayed %q",
				tc.payer, tc.remote, w.Code, callerOf(t, w), w.Header().Get(httpapi.HeaderIdempotentReplayed), tc.caller, tc.replayed)
		}
	}
}

// TestServer_ipv6HostKeepsToItsShare: a host rotating through the
// addresses of its IPv6 /64, one trial call with an Idempotency-Key from
// each, is one caller of the idempotency store, as it is one of the trial
// limit: filling the store, it drops its own oldest answers, never the
// answers an integration keeps, whose retry is then replayed.
func TestServer_ipv6HostKeepsToItsShare(t *testing.T) {
	srv := newServer(t, httpapi.Config{
		Endpoints: []httpapi.Endpoint{
			{Method: "POST", Path: "/key", Access: httpapi.Key, Prepare: echo},
			{Method: "POST", Path: "/trial", Access: httpapi.Trial, Prepare: echo},
		},
		TrialLimit:     httpapi.TrialLimit{Rate: rate.Every(time.Hour), Burst: 10},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		Idempotency:    &httpapi.MemoryIdempotencyStore{MaxEntries: 5},
	})
	for _, key := range []string{"a1", "a2"} {
		if r := send(t, "POST", srv.URL+"/key", `{}`, "Authorization", "Bearer "+testKey, "Idempotency-Key", key); r.status != http.StatusOK {
			t.Fatalf("alice's call %s: %d %s", key, r.status, r.body)
		}
	}
	for i := range 4 {
		client := fmt.Sprintf("2001:db8:0:1::%x", i+1)
		if r := send(t, "POST", srv.URL+"/trial", `{}`, "X-Forwarded-For", client, "Idempotency-Key", "t"); r.status != http.StatusOK {
			t.Fatalf("trial call from %s: %d %s", client, r.status, r.body)
		}
	}
	for _, key := range []string{"a1", "a2"} {
		r := send(t, "POST", srv.URL+"/key", `{}`, "Authorization", "Bearer "+testKey, "Idempotency-Key", key)
		if got := r.header.Get(httpapi.HeaderIdempotentReplayed); r.status != http.StatusOK || got != "true" {
			t.Errorf("alice's retry of %s: %d, Idempotent-Replayed %q; want her kept answer replayed", key, r.status, got)
		}
	}
}
