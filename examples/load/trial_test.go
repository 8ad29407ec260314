package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestRun_rateLimitIsReportedNotWaitedOut sends trial calls to a server
// whose limiter, like the demo server's (ten a minute), asks for a
// Retry-After well under the client's default bound of 30s. A 429 is the
// answer the trial_v2 kind measures: each call must reach the server once
// and come back as a deliberate rate limit, not be retried after the
// server's Retry-After until the limit lets it through.
func TestRun_rateLimitIsReportedNotWaitedOut(t *testing.T) {
	var allowed, trialRequests atomic.Int64
	limiter := router.RateLimiterFunc(func(context.Context, string, time.Time) (bool, time.Duration, error) {
		if allowed.Add(1) == 1 {
			return true, 0, nil
		}
		return false, time.Second, nil
	})
	answer := routertest.Verdict(router.VerdictValid)
	engine, err := router.NewEngine(routertest.Sessions(1, 2, answer, answer, answer, answer, answer, answer))
	if err != nil {
		t.Fatal(err)
	}
	h, err := router.NewHandler(engine, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"demo-key": "demo"})),
		router.WithRateLimiter(limiter))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, "/trial/") {
			trialRequests.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	mix, err := parseMix("trial_v2=1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config{url: srv.URL, apiKey: "demo-key", calls: 4, round: 4, concurrency: 4, mix: mix,
		duration: time.Minute, seed: 7, settle: time.Second, quiet: 100 * time.Millisecond, every: time.Minute}
	s, err := run(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	type figures struct{ Requests, RateLimited, Bad int }
	got := figures{int(trialRequests.Load()), s.errors["429 rate_limited"], s.bad}
	want := figures{Requests: 4, RateLimited: 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("4 trial calls, the limiter allowing one (-want +got):\n%s", diff)
	}
}
