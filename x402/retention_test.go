package x402_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

func TestMemoryOutcomes(t *testing.T) {
	x402test.TestOutcomeStore(t, func(t *testing.T) x402.OutcomeStore { return &x402.MemoryOutcomes{} })
}

// TestMiddleware_refusesAuthorizationValidTooLong: an authorization
// valid for longer than the server remembers proofs (MaxValidity) is
// refused 402 with reason authorization_validity_too_long before the
// handler runs and before anything is recorded; one signed as the
// official clients sign (validBefore = now + the offer's
// maxTimeoutSeconds) is served.
func TestMiddleware_refusesAuthorizationValidTooLong(t *testing.T) {
	var runs int
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) { runs++ })
	o := offer(t)
	payer := newPayer(t)
	send := func(signed x402.PaymentRequirements) (int, string) {
		proof, err := payer.Pay(t.Context(), signed)
		if err != nil {
			t.Fatal(err)
		}
		v, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: x402.Version2, Accepted: o, Payload: proof.Payload})
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ps.URL+"/paid", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(x402.HeaderPaymentSignature, v)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		terms, _ := x402.DecodePaymentRequired(resp.Header.Get(x402.HeaderPaymentRequired))
		if terms == nil {
			return resp.StatusCode, ""
		}
		return resp.StatusCode, terms.Error
	}
	long := o
	long.MaxTimeoutSeconds = int((x402.DefaultMaxValidity + time.Minute) / time.Second)
	status, reason := send(long)
	if status != http.StatusPaymentRequired || !strings.HasPrefix(reason, "authorization_validity_too_long") {
		t.Errorf("authorization valid %d s: %d %q; want 402 authorization_validity_too_long", long.MaxTimeoutSeconds, status, reason)
	}
	if runs != 0 || len(ps.fac.Settlements()) != 0 {
		t.Errorf("the handler ran %d times and %d settled, want none", runs, len(ps.fac.Settlements()))
	}
	if status, reason := send(o); status != http.StatusOK {
		t.Errorf("authorization valid for the offer's %d s: %d %q; want 200", o.MaxTimeoutSeconds, status, reason)
	}
}

// TestMiddleware_maxValidityConfig: an offer whose maxTimeoutSeconds
// exceeds MaxValidity, a negative MaxValidity, and a memory store that
// forgets sooner than MaxValidity are configuration errors.
func TestMiddleware_maxValidityConfig(t *testing.T) {
	o := offer(t)
	long := o
	long.MaxTimeoutSeconds = 7200
	for _, tt := range []struct {
		name string
		cfg  x402.MiddlewareConfig
	}{
		{"offer longer than MaxValidity", x402.MiddlewareConfig{Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{long}}}}},
		{"negative MaxValidity", x402.MiddlewareConfig{MaxValidity: -time.Second}},
		{"replay store forgets sooner", x402.MiddlewareConfig{Replay: &x402.MemoryReplay{MaxRetention: 10 * time.Minute}}},
		{"outcome store forgets sooner", x402.MiddlewareConfig{MaxValidity: 2 * time.Hour, Outcomes: &x402.MemoryOutcomes{}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Facilitator = newPaidServer(t, serverOptions{}, nil).fac
			if cfg.Routes == nil {
				cfg.Routes = map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{o}}}
			}
			if _, err := x402.Middleware(cfg); err == nil {
				t.Error("Middleware accepted the configuration")
			}
		})
	}
}

// TestMemoryReplay_bounded: a MemoryReplay holds at most MaxEntries
// unexpired keys, refusing more with ErrReplayStoreFull rather than
// forgetting a used proof, and refuses a key asked to outlive
// MaxRetention with ErrBeyondRetention.
func TestMemoryReplay_bounded(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	s := &x402.MemoryReplay{MaxEntries: 3, MaxRetention: time.Hour}
	for i, until := range []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute} {
		if ok, err := s.Reserve(ctx, string(rune('a'+i)), now, now.Add(until)); !ok || err != nil {
			t.Fatalf("Reserve %d = %v, %v", i, ok, err)
		}
	}
	if ok, err := s.Reserve(ctx, "d", now, now.Add(time.Minute)); ok || !errors.Is(err, x402.ErrReplayStoreFull) {
		t.Errorf("Reserve on a full store = %v, %v; want ErrReplayStoreFull", ok, err)
	}
	if ok, err := s.Reserve(ctx, "a", now, now.Add(time.Minute)); ok || err != nil {
		t.Errorf("Reserve of a used key on a full store = %v, %v; want false, nil", ok, err)
	}
	later := now.Add(time.Minute) // "a" expired
	if ok, err := s.Reserve(ctx, "d", later, later.Add(time.Minute)); !ok || err != nil {
		t.Errorf("Reserve once a key expired = %v, %v; want true", ok, err)
	}
	if n := s.Len(); n != 3 {
		t.Errorf("Len = %d, want 3", n)
	}
	if err := s.Release(ctx, "b", now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Reserve(ctx, "e", later, later.Add(time.Hour+time.Second)); ok || !errors.Is(err, x402.ErrBeyondRetention) {
		t.Errorf("Reserve past MaxRetention = %v, %v; want ErrBeyondRetention", ok, err)
	}
	if ok, err := s.Reserve(ctx, "e", later, later.Add(time.Hour)); !ok || err != nil {
		t.Errorf("Reserve at MaxRetention = %v, %v; want true", ok, err)
	}
}

// TestMemoryOutcomes_bounded: a MemoryOutcomes keeps at most MaxEntries
// outcomes and MaxBytes of responses, dropping the one that expires
// first, refuses an outcome larger than MaxBytes, and keeps none past
// MaxRetention.
func TestMemoryOutcomes_bounded(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := &x402.MemoryOutcomes{MaxEntries: 2, MaxBytes: 1 << 20, MaxRetention: time.Hour}
	keep := func(key string, until time.Duration, body int) {
		t.Helper()
		o := x402.Outcome{Response: x402.BufferedResponse{Status: http.StatusBadGateway, Body: make([]byte, body)}}
		if err := s.Keep(ctx, key, o, now.Add(until)); err != nil {
			t.Fatal(err)
		}
	}
	has := func(key string, at time.Time) bool {
		_, ok, err := s.Lookup(ctx, key, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	keep("a", 2*time.Minute, 10)
	keep("b", time.Minute, 10)
	keep("c", 3*time.Minute, 10)
	if has("b", now) || !has("a", now) || !has("c", now) || s.Len() != 2 {
		t.Errorf("after 3 keeps in 2 entries: a %v, b %v, c %v, Len %d; want b (expiring first) dropped", has("a", now), has("b", now), has("c", now), s.Len())
	}
	keep("big", 5*time.Minute, 1<<20-1024)
	if has("a", now) || has("c", now) || !has("big", now) {
		t.Errorf("a response of nearly MaxBytes: a %v, c %v, big %v; want only big kept", has("a", now), has("c", now), has("big", now))
	}
	if err := s.Keep(ctx, "huge", x402.Outcome{Response: x402.BufferedResponse{Body: make([]byte, 1<<20)}}, now.Add(time.Minute)); err == nil || has("huge", now) || !has("big", now) {
		t.Errorf("Keep of a response of MaxBytes = %v, kept %v, big kept %v; want an error, nothing kept and nothing dropped", err, has("huge", now), has("big", now))
	}
	keep("far", 10*time.Hour, 10)
	if !has("far", now.Add(59*time.Minute)) || has("far", now.Add(61*time.Minute)) {
		t.Errorf("an outcome kept until 10 h: at 59 min %v, at 61 min %v; want kept for MaxRetention (1 h) only", has("far", now.Add(59*time.Minute)), has("far", now.Add(61*time.Minute)))
	}
}

// TestMemoryOutcomes_payersApart: one payer's outcomes, delivered or
// refused, never push out another payer's outcome while that payer holds
// less, and refusals, kept in a budget of their own, never push out a
// delivered outcome.
func TestMemoryOutcomes_payersApart(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := &x402.MemoryOutcomes{MaxEntries: 10, MaxRetention: time.Hour}
	keep := func(payer, key string, delivered bool) error {
		o := x402.Outcome{Payer: payer, Delivered: delivered, Response: x402.BufferedResponse{Status: http.StatusOK, Body: []byte("answer")}}
		return s.Keep(ctx, key, o, now.Add(time.Hour))
	}
	for i := range 3 {
		if err := keep("0xa11ce", fmt.Sprint("alice", i), true); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		keep("0xe7e", fmt.Sprint("refused", i), false)
	}
	for i := range 50 {
		keep("0xe7e", fmt.Sprint("bought", i), true)
	}
	for i := range 3 {
		if _, ok, _ := s.Lookup(ctx, fmt.Sprint("alice", i), now); !ok {
			t.Errorf("alice's outcome %d dropped by another payer's 100 outcomes", i)
		}
	}
	if _, ok, _ := s.Lookup(ctx, "bought49", now); !ok || s.Len() != 20 {
		t.Errorf("the other payer's latest delivered outcome kept %v, Len %d; want true, 20 (two budgets of 10)", ok, s.Len())
	}
	if err := keep("0xa11ce", "alice-refused", false); err != nil {
		t.Errorf("alice's refusal beside another payer's 10 refusals: %v", err)
	}
	if s.Len() != 20 {
		t.Errorf("Len = %d, want 20: two budgets of 10", s.Len())
	}
}

// TestMemoryOutcomes_keptAgain: an outcome kept again under its key in
// the other budget replaces the first, whichever budget each is in.
func TestMemoryOutcomes_keptAgain(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := &x402.MemoryOutcomes{}
	for _, delivered := range []bool{false, true, false} {
		if err := s.Keep(ctx, "k", x402.Outcome{Payer: "0xa11ce", Delivered: delivered}, now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if o, ok, _ := s.Lookup(ctx, "k", now); !ok || o.Delivered != delivered || s.Len() != 1 {
			t.Errorf("kept again with Delivered %v: Lookup = %+v, %v; Len %d; want it alone", delivered, o, ok, s.Len())
		}
	}
}
