package trustmcp_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// An authorization valid for longer than the server remembers a payment
// (PaywallConfig.MaxValidity, an hour by default) is refused with the
// terms, reason authorization_validity_too_long, before it is reserved or
// verified: the tool does not run, nothing settles and nothing is kept,
// so that a replay of it can never outlive its record. One valid for the
// offer's own time passes.
func TestPaywall_refusesAuthorizationValidTooLong(t *testing.T) {
	answers := &trustmcp.MemoryAnswers{}
	r := newReplayRig(t, trustmcp.PaywallConfig{Answers: answers})
	cs := connect(t, r.srv)
	ctx := context.Background()
	payer, err := evm.NewPayer("0x" + payerKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		valid   time.Duration
		refused bool
	}{
		{30 * 24 * time.Hour, true},
		{time.Hour + 2*time.Second, true},
		{time.Minute, false},
	} {
		o := r.pr.Accepts[0]
		o.MaxTimeoutSeconds = int(tt.valid / time.Second) // what the payer signs for
		proof, err := payer.Pay(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		res, err := paidCall(ctx, t, cs, "square", 4, x402.PaymentPayload{X402Version: 2, Accepted: r.pr.Accepts[0], Payload: proof.Payload})
		if err != nil {
			t.Fatal(err)
		}
		if !tt.refused {
			answer(t, res)
			continue
		}
		if pr := paidTerms(t, res); !strings.HasPrefix(pr.Error, "authorization_validity_too_long") {
			t.Errorf("valid for %s: %q, want authorization_validity_too_long", tt.valid, pr.Error)
		}
	}
	if runs, settled, kept := r.runs.Load(), r.fac.settled.Load(), answers.Len(); runs != 1 || settled != 1 || kept != 1 {
		t.Errorf("ran %d times, settled %d, kept %d answers; want 1 each (the short authorization)", runs, settled, kept)
	}
}

func TestPaywall_configMaxValidity(t *testing.T) {
	offer, _ := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	long := offer
	long.MaxTimeoutSeconds = 2 * 3600
	price := map[string]x402.Price{"square": {Accepts: []x402.PaymentRequirements{long}}}
	short := map[string]x402.Price{"square": {Accepts: []x402.PaymentRequirements{offer}}}
	for _, cfg := range []trustmcp.PaywallConfig{
		{Facilitator: &evm.Facilitator{}, Prices: price},                                // beyond the default hour
		{Facilitator: &evm.Facilitator{}, Prices: price, MaxValidity: 90 * time.Minute}, // still beyond
		{Facilitator: &evm.Facilitator{}, Prices: short, MaxValidity: -time.Second},
		{Facilitator: &evm.Facilitator{}, Prices: short, MaxValidity: 30 * time.Second}, // other payloads are remembered a minute
		{Facilitator: &evm.Facilitator{}, Prices: short, Answers: &trustmcp.MemoryAnswers{MaxRetention: 30 * time.Minute}},
	} {
		if _, err := trustmcp.Paywall(cfg); err == nil || !strings.Contains(err.Error(), "MaxValidity") {
			t.Errorf("Paywall with offers of %d s and MaxValidity %s: %v, want an error naming MaxValidity", cfg.Prices["square"].Accepts[0].MaxTimeoutSeconds, cfg.MaxValidity, err)
		}
	}
	for _, cfg := range []trustmcp.PaywallConfig{
		{Facilitator: &evm.Facilitator{}, Prices: price, MaxValidity: 3 * time.Hour},
		{Facilitator: &evm.Facilitator{}, Prices: short, Answers: &trustmcp.MemoryAnswers{}},
	} {
		if _, err := trustmcp.Paywall(cfg); err != nil {
			t.Errorf("Paywall with MaxValidity %s above the offers and the answers' retention: %v", cfg.MaxValidity, err)
		}
	}
}

// MemoryAnswers keeps no answer beyond its MaxRetention, whatever the
// time it is asked to keep it until, and keeps results and refusals each
// within MaxEntries and MaxBytes, the oldest going first.
func TestMemoryAnswers_bounds(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := &trustmcp.MemoryAnswers{MaxEntries: 4, MaxBytes: 1 << 20, MaxRetention: time.Minute}
	if err := s.Keep(ctx, "far", "0xa11ce", []byte(`{}`), now.Add(365*24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Answer(ctx, "far", now.Add(30*time.Second)); !ok {
		t.Error("an answer was forgotten within MaxRetention")
	}
	if _, ok, _ := s.Answer(ctx, "far", now.Add(2*time.Minute)); ok {
		t.Error("an answer was kept beyond MaxRetention")
	}

	s = &trustmcp.MemoryAnswers{MaxEntries: 4, MaxBytes: 1 << 20}
	keep := func(key string, n int) {
		t.Helper()
		if err := s.Keep(ctx, key, "0xa11ce", []byte(strings.Repeat("x", n)), now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if s.Len() > 2*s.MaxEntries || s.Bytes() > 2*s.MaxBytes {
			t.Fatalf("after %s: %d answers of %d bytes, beyond two budgets of %d and %d", key, s.Len(), s.Bytes(), s.MaxEntries, s.MaxBytes)
		}
	}
	kept := func(keys ...string) string {
		var got []string
		for _, k := range keys {
			if _, ok, _ := s.Answer(ctx, k, now); ok {
				got = append(got, k)
			}
		}
		return strings.Join(got, " ")
	}
	keep("a1", 10)
	keep("r1#refused", 10)
	keep("a2", 10)
	keep("r2#refused", 10)
	keep("a3", 10)
	keep("a4", 10)
	keep("a5", 10) // the oldest result goes, not a refusal
	for i := range 5 {
		keep(fmt.Sprint("r", i+3, "#refused"), 10) // the oldest refusals go
	}
	if got, want := kept("a1", "r1#refused", "a2", "r2#refused", "r3#refused", "a3", "a4", "a5", "r7#refused"), "a2 a3 a4 a5 r7#refused"; got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	s.MaxBytes = 5000
	for i := range 10 {
		keep(fmt.Sprint("big", i), 1000)
	}
	// Each takes 1,000 bytes and about 150 more: four fit in 5,000.
	if got, want := kept("big5", "big6", "big7", "big8", "big9"), "big6 big7 big8 big9"; got != want || s.Len() != 8 {
		t.Errorf("kept %q of %d answers, %d bytes; want %q, the newest within 5000 bytes", got, s.Len(), s.Bytes(), want)
	}
	if err := s.Keep(ctx, "huge", "0xa11ce", make([]byte, 5000), now.Add(time.Minute)); err == nil {
		t.Error("a result larger than MaxBytes was kept")
	}
}

// payerLog is a MemoryAnswers that records the payer of each Keep.
type payerLog struct {
	trustmcp.MemoryAnswers
	mu     sync.Mutex
	payers []string
}

func (l *payerLog) Keep(ctx context.Context, key, payer string, answer []byte, until time.Time) error {
	l.mu.Lock()
	l.payers = append(l.payers, payer)
	l.mu.Unlock()
	return l.MemoryAnswers.Keep(ctx, key, payer, answer, until)
}

// The paywall keeps a paid result under the payer the facilitator
// verified (before it settles, and once settled), and MemoryAnswers
// keeps payers apart: another payer's results
// and refusals, however many, do not forget a payer's result while that
// payer holds less, and refusals, kept apart, never forget a result.
func TestMemoryAnswers_payersApart(t *testing.T) {
	answers := &payerLog{}
	r := newReplayRig(t, trustmcp.PaywallConfig{Answers: answers})
	cs := connect(t, r.srv)
	ctx := context.Background()
	pp, from := signedPayment(t, r.pr.Accepts[0])
	res, err := paidCall(ctx, t, cs, "square", 4, pp)
	if err != nil {
		t.Fatal(err)
	}
	answer(t, res)
	if want := []string{from, from}; !slices.EqualFunc(answers.payers, want, strings.EqualFold) {
		t.Errorf("kept under payers %q, want %q", answers.payers, want)
	}

	s := &trustmcp.MemoryAnswers{MaxEntries: 10}
	now := time.Now()
	for i := range 3 {
		if err := s.Keep(ctx, fmt.Sprint("alice", i), "0xa11ce", []byte(`{}`), now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		s.Keep(ctx, fmt.Sprint("eve", i, "#refused"), "0xe7e", []byte(`{}`), now.Add(time.Minute))
		s.Keep(ctx, fmt.Sprint("eve", i), "0xe7e", []byte(`{}`), now.Add(time.Minute))
	}
	for i := range 3 {
		if _, ok, _ := s.Answer(ctx, fmt.Sprint("alice", i), now); !ok {
			t.Errorf("alice's result %d forgotten after another payer's 100 results and refusals", i)
		}
	}
	if err := s.Keep(ctx, "alice#refused", "0xa11ce", []byte(`{}`), now.Add(time.Minute)); err != nil {
		t.Errorf("alice's refusal beside another payer's 10 refusals: %v", err)
	}
	if _, ok, _ := s.Answer(ctx, "eve49", now); !ok {
		t.Error("the other payer's latest result forgotten")
	}
}

// settledNotKept is an answer store that cannot keep a result once its
// payment settled (under a key with no suffix), as a database that fails
// at that moment.
type settledNotKept struct{ trustmcp.MemoryAnswers }

func (s *settledNotKept) Keep(ctx context.Context, key, payer string, answer []byte, until time.Time) error {
	if !strings.Contains(key, "#") {
		return errors.New("the answer store is down")
	}
	return s.MemoryAnswers.Keep(ctx, key, payer, answer, until)
}

// A paid result the answer store does not keep once it settled is still
// recorded as settled in the replay store: the settlement happened, and
// the retry gets the result kept before the settlement, with the first
// settlement, never run or charged again.
func TestPaywall_settlementRecordedWhenAnswerNotKept(t *testing.T) {
	replay := &x402.MemoryReplay{}
	r := newReplayRig(t, trustmcp.PaywallConfig{Answers: &settledNotKept{}, Replay: replay})
	cs := connect(t, r.srv)
	ctx := context.Background()
	pp, _ := signedPayment(t, r.pr.Accepts[0])
	var got []answerOf
	for range 2 {
		res, err := paidCall(ctx, t, cs, "square", 4, pp)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, answer(t, res))
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("the retry (-first +retry):\n%s", diff)
	}
	key, _ := x402.ReplayKey(&pp, r.pr.Accepts[0], time.Now())
	sp, ok, err := replay.LookupSettled(ctx, key, time.Now())
	if err != nil || !ok || !sp.Settlement.Success {
		t.Errorf("LookupSettled = %+v, %v, %v; want the settlement recorded", sp, ok, err)
	}
	if runs, settled := r.runs.Load(), r.fac.settled.Load(); runs != 1 || settled != 1 {
		t.Errorf("ran %d times, settled %d; want once each", runs, settled)
	}
}

// signedPayment returns a version 2 payment of offer signed by the test
// payer, and the payer's address.
func signedPayment(t *testing.T, offer x402.PaymentRequirements) (x402.PaymentPayload, string) {
	t.Helper()
	payer, err := evm.NewPayer("0x" + payerKey)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := payer.Pay(context.Background(), offer)
	if err != nil {
		t.Fatal(err)
	}
	return x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: proof.Payload}, payer.Address().String()
}
