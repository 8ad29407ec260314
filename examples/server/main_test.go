package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// syncBuffer is a bytes.Buffer safe for the server's log and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServer runs the server on a free loopback port and returns its
// base URL, its log, and a stop function that shuts it down and returns
// run's error.
func startServer(t *testing.T, args ...string) (base string, log *syncBuffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	log = new(syncBuffer)
	done := make(chan error, 1)
	go func() {
		err := run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw, log)
		pw.CloseWithError(err)
		done <- err
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		cancel()
		t.Fatalf("no banner: %v; log:\n%s", <-done, log)
	}
	line := sc.Text()
	i := strings.Index(line, "http://")
	if i < 0 {
		cancel()
		t.Fatalf("banner %q names no address", line)
	}
	base = line[i:]
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return base, log, stop
}

func TestRun_endToEnd(t *testing.T) {
	base, log, stop := startServer(t)
	ctx := context.Background()

	// A v3 validate with the demo API key: the claim is judged from its
	// arithmetic, by three replicas.
	c, err := router.NewClient(base, router.WithAPIKey(defaultAPIKey))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		output  string
		verdict router.Verdict
		reason  string
	}{
		{`"17 * 3 = 51"`, router.VerdictValid, "17 * 3 = 51 holds"},
		{`"17 * 3 = 50"`, router.VerdictInvalid, "17 * 3 is 51, not 50"},
		{`"Paris is the capital of France."`, router.VerdictNeedsSpec, "no equation to check"},
	}
	for _, tt := range tests {
		resp, err := c.ValidateV3(ctx, &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "tool_output", Output: json.RawMessage(tt.output)}},
			Consensus:    router.ConsensusRequest{Replicas: 3},
		})
		if err != nil {
			t.Fatalf("ValidateV3(%s): %v", tt.output, err)
		}
		if resp.Verdict != tt.verdict || resp.Consensus.Replicas != 3 || len(resp.Evidence.Runs) != 3 ||
			len(resp.Reasons) == 0 || !strings.Contains(resp.Reasons[0], tt.reason) {
			t.Errorf("ValidateV3(%s) = %s %v with %d runs, want %s with 3 runs and reason %q",
				tt.output, resp.Verdict, resp.Reasons, len(resp.Evidence.Runs), tt.verdict, tt.reason)
		}
	}

	// Without the key, a normal route refuses.
	anon, _ := router.NewClient(base, router.WithRetry(router.RetryPolicy{}))
	_, err = anon.ValidateV2(ctx, &router.ValidateV2Request{SessionID: 1,
		ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "t", Output: json.RawMessage(`"1 + 1 = 2"`)}}})
	var rerr *router.Error
	if !errors.As(err, &rerr) || rerr.Status != http.StatusUnauthorized {
		t.Errorf("call without a key: %v, want 401", err)
	}

	// An x402 route answers 402 with the demo terms, then takes a payment.
	body := `{"session_id":1,"claim":{"type":"tool_output","output":"6 × 7 = 42"}}`
	url := base + "/api/v2/x402/validate"
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	terms, err := x402.ReadPaymentRequired(resp)
	if resp.StatusCode != http.StatusPaymentRequired || err != nil || len(terms.Accepts) != 1 {
		t.Fatalf("unpaid call = %d, terms %+v (%v), want 402 with one offer", resp.StatusCode, terms, err)
	}
	if o := terms.Accepts[0]; o.Amount != "1000" || o.PayTo != defaultPayTo || o.Network != "eip155:84532" {
		t.Errorf("offer = %+v, want 1000 units to %s on eip155:84532", o, defaultPayTo)
	}

	payer, err := evm.NewPayer(strings.Repeat("47", 32))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{MaxAmount: 10000}}}
	resp, err = hc.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v2 router.ValidateV2Response
	if err := json.NewDecoder(resp.Body).Decode(&v2); err != nil || resp.StatusCode != http.StatusOK || v2.Verdict != router.VerdictValid {
		t.Errorf("paid call = %d, %+v (%v), want 200 VALID", resp.StatusCode, v2, err)
	}
	s, err := x402.SettlementFromResponse(resp)
	if err != nil || !s.Success || s.Payer != payer.Address().String() || s.Amount != "1000" {
		t.Errorf("settlement = %+v (%v), want success by %s for 1000 units", s, err, payer.Address())
	}

	if err := stop(); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	for _, want := range []string{`msg="router request"`, "path=/api/v3/validate", "status=402", `msg="x402: settled"`, "msg=stopped"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestRun_banner(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	cancel() // serve nothing: print the banner and stop
	if err := run(ctx, []string{"-addr", "127.0.0.1:0", "-api-key", "k1", "-pay-to", "0x1111111111111111111111111111111111111111"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Authorization: Bearer k1", "curl -s http://127.0.0.1:", "/api/v3/validate",
		"payTo 0x1111111111111111111111111111111111111111", "eip155:84532", "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
		"/api/v2/x402/validate    $0.001 (1000 atomic units)", "/api/v1/x402/delegate    $0.002 (2000 atomic units)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRun_flags(t *testing.T) {
	var usage bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, io.Discard, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"-addr HOST:PORT", "127.0.0.1:8080", "-api-key KEY", "demo-key", "-pay-to ADDRESS", defaultPayTo} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, usage.String())
		}
	}
	for _, args := range [][]string{
		{"-pay-to", "0x12"},
		{"-api-key", ""},
		{"-addr", "127.0.0.1:0", "extra"},
		{"-addr", "256.0.0.1:1"},
	} {
		if err := run(context.Background(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("run %q succeeded, want an error", args)
		}
	}
}
