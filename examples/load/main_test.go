package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// testCallIDs is how many call ids the test server says it counts by.
const testCallIDs = 1000

// testServer is an in-process stand-in for examples/server: a router
// Handler and a trust Handler over one engine whose workers count their
// executions by metadata.call_id (laid out as the demo server's: session 2
// slow, session 5 lying), and the /debug/vars members the load
// program reads. A trial caller gets trialBurst calls, then 429s.
type testServer struct {
	api, debug *httptest.Server
	mu         sync.Mutex
	byID       map[string]int64
	onCall     func(calls int) // when set, called with the executions counted so far
}

func newTestServer(t *testing.T, trialBurst int) *testServer {
	t.Helper()
	ts := &testServer{byID: map[string]int64{}}
	count := func(w router.Worker) router.Worker {
		return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
			if id, ok := job.Metadata["call_id"].(string); ok {
				ts.mu.Lock()
				ts.byID[id]++
				hook, n := ts.onCall, len(ts.byID)
				ts.mu.Unlock()
				if hook != nil {
					hook(n)
				}
			}
			return w.Work(ctx, job)
		})
	}
	answer := router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		if job.Kind == router.KindDelegate {
			return routertest.Answer("42").Work(ctx, job)
		}
		return routertest.Verdict(router.VerdictValid).Work(ctx, job)
	})
	var sessions []router.Session
	for i, w := range []router.Worker{answer, routertest.Slow(answer, time.Second), answer, answer, routertest.Lie(answer), answer} {
		sessions = append(sessions, router.Session{ID: router.SessionID(i + 1), Worker: count(w), Pool: fmt.Sprint(i % 2)})
	}
	engine, err := router.NewEngine(sessions)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}}), trust.WithSignedReceipts())
	if err != nil {
		t.Fatal(err)
	}
	auth := router.KeyAuthenticator(map[string]string{"demo-key": "demo"})
	limit := router.TrialLimit{Rate: 1e-9, Burst: trialBurst}
	rh, err := router.NewHandler(engine, router.WithAuthenticator(auth), router.WithTrialLimit(limit))
	if err != nil {
		t.Fatal(err)
	}
	th, err := trust.NewHandler(svc, trust.WithAuthenticator(auth))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", rh)
	mux.Handle("/api/v4/", th)
	ts.api = httptest.NewServer(mux)
	t.Cleanup(ts.api.Close)
	ts.debug = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		ts.mu.Lock()
		defer ts.mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{
			"goroutines":            runtime.NumGoroutine(),
			"memstats":              ms,
			"executions_by_call_id": ts.byID,
			"call_ids_limit":        testCallIDs,
		})
	}))
	t.Cleanup(ts.debug.Close)
	return ts
}

func (ts *testServer) config(calls, concurrency int, mix string) config {
	m, err := parseMix(mix)
	if err != nil {
		panic(err)
	}
	// The heap is watched for a tenth of a second, not the program's two:
	// the growth check is the same, on a shorter watch.
	return config{url: ts.api.URL, debugURL: ts.debug.URL + "/debug/vars", apiKey: "demo-key", calls: calls,
		concurrency: concurrency, round: calls, mix: m, duration: time.Minute, seed: 7, settle: 5 * time.Second,
		quiet: 100 * time.Millisecond, every: 100 * time.Millisecond}
}

// TestRun is the small load that runs with the tests: 500 mixed calls
// from 32 clients against an in-process server. Every check must pass:
// no error, the executions counted per call id equal to what the answers
// report, and the server's goroutines back to their count before the load.
func TestRun(t *testing.T) {
	ts := newTestServer(t, 1)
	var progress bytes.Buffer
	s, err := run(context.Background(), ts.config(500, 32, defaultMix), &progress)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	s.write(&out)
	t.Log("\n" + out.String())
	if !s.passed() {
		t.Errorf("checks failed: %v", s.failed())
	}
	if s.sent != 500 || s.bad != 0 {
		t.Errorf("%d calls sent with %d errors, want 500 and 0", s.sent, s.bad)
	}
	// Each kind runs: version 2 once, version 3 three replicas, trust at
	// least once; so 500 calls make more than 500 executions.
	if c := s.counts; c.expected != c.counted || c.expected <= 500 {
		t.Errorf("executions: %d expected, %d counted; want equal and above 500", c.expected, c.counted)
	}
	for _, k := range []kind{validateV2, validateV3, delegateV3, trustCall} {
		if len(s.byKind[k]) == 0 {
			t.Errorf("no %s call in the mix", k)
		}
	}
	if !strings.Contains(out.String(), "PASS") || !strings.Contains(out.String(), "p99") {
		t.Errorf("summary lacks the verdict or the latency table:\n%s", out.String())
	}
}

// TestRun_rateLimitsAreAllowed sends trial calls past their limit: the
// 429s are reported as deliberate rate limits, nothing runs for them, and
// the load still passes.
func TestRun_rateLimitsAreAllowed(t *testing.T) {
	ts := newTestServer(t, 5)
	s, err := run(context.Background(), ts.config(40, 4, "trial_v2=1"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.errors["429 rate_limited"]; got != 35 {
		t.Errorf("%d rate-limited calls, want 35 (40 calls, a burst of 5): %v", got, s.errors)
	}
	if !s.passed() || s.counts.refusedRan != 0 || s.counts.expected != 5 {
		t.Errorf("checks %v, refused but run %d, executions %d; want a pass with 5 executions", s.failed(), s.counts.refusedRan, s.counts.expected)
	}
}

// TestRun_detectsARerun makes the server run one call twice behind the
// load's back: the check must catch it.
func TestRun_detectsARerun(t *testing.T) {
	ts := newTestServer(t, 1)
	cfg := ts.config(20, 2, "validate_v2=1")
	l, err := newLoader(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	round := make([]outcome, cfg.calls)
	l.send(context.Background(), round, 0, &tally{})
	ts.mu.Lock()
	ts.byID[round[3].call.id]++ // a second execution of call 3
	ts.mu.Unlock()
	v, err := l.vars(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var c counts
	l.compare(&c, v, round, len(round))
	if c.twice != 1 || c.lost != 0 || c.expected != 20 {
		t.Errorf("counts %+v; want one call run twice among 20 executions", c)
	}
	s := &summary{cfg: cfg, before: v, after: v, later: v, counts: c}
	if s.passed() {
		t.Error("the load passed with a call run twice")
	}
}

// TestRun_rounds: the calls go in rounds, the server's counts are compared
// after each and its live heap recorded; a round larger than the ids the
// server counts is refused before any call.
func TestRun_rounds(t *testing.T) {
	ts := newTestServer(t, 1)
	cfg := ts.config(250, 16, defaultMix)
	cfg.round = 100
	s, err := run(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var calls []int
	for _, h := range s.heap {
		calls = append(calls, h.calls)
		if h.live == 0 {
			t.Errorf("no live heap read at %d calls", h.calls)
		}
	}
	if !s.passed() || !slices.Equal(calls, []int{100, 200, 250}) || s.counts.expected <= 250 {
		t.Errorf("checks %v, heap read at %v calls, %d executions; want a pass, reads at 100, 200, 250, and above 250 executions", s.failed(), calls, s.counts.expected)
	}

	cfg.calls, cfg.round = 2*testCallIDs, testCallIDs+1
	if _, err := run(context.Background(), cfg, io.Discard); err == nil || !strings.Contains(err.Error(), "-round") {
		t.Errorf("a round above the server's bound: %v, want an error naming -round", err)
	}
}

func TestParseFlags(t *testing.T) {
	for _, tt := range []struct {
		args []string
		ok   bool
	}{
		{nil, true},
		{[]string{"-calls", "0"}, false},
		{[]string{"-round", "0"}, false},
		{[]string{"-concurrency", "-1"}, false},
		{[]string{"-mix", "validate_v2=0"}, false},
		{[]string{"-mix", "bogus=1"}, false},
		{[]string{"-mix", "trust=1,trust=2"}, false},
		{[]string{"-mix", "trust=1,validate_v3=2"}, true},
		{[]string{"-url", "ftp://x"}, false},
		{[]string{"-debug-url", ""}, true},
		{[]string{"-duration", "0s"}, false},
		{[]string{"extra"}, false},
	} {
		_, err := parseFlags(tt.args, io.Discard)
		if (err == nil) != tt.ok {
			t.Errorf("parseFlags(%q) = %v, want ok %v", tt.args, err, tt.ok)
		}
	}
	if _, err := parseFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
}

// TestRun_noCallSent checks that a load whose -duration ends before any
// call is sent prints its summary with the calls not sent as a failure,
// rather than panicking on an empty table.
func TestRun_noCallSent(t *testing.T) {
	cfg, err := parseFlags([]string{"-url", "http://127.0.0.1:1", "-debug-url", "", "-calls", "10", "-duration", "1ns"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Millisecond)
	s, err := run(context.Background(), cfg, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s.write(&out)
	if got := out.String(); !strings.Contains(got, "10 calls not sent") || !strings.Contains(got, "FAIL:") {
		t.Errorf("summary lacks the unsent calls' failure:\n%s", got)
	}
}
