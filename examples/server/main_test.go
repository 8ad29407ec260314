package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/receipt"
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

// banner is what a test reads from the server's banner.
type banner struct {
	base   string // the API's base URL
	debug  string // the URL of /debug/vars, or empty
	issuer string // the receipts' public key, "ed25519:..."
	text   string
}

// readBanner reads the banner from r, up to its last line ("  pay for
// one: ..."), and parses it.
func readBanner(r io.Reader) (banner, error) {
	var b banner
	var text strings.Builder
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		text.WriteString(line + "\n")
		switch {
		case b.base == "" && strings.Contains(line, "listening on http://"):
			b.base = line[strings.Index(line, "http://"):]
		case strings.HasPrefix(line, "  debug vars: "):
			b.debug = strings.TrimPrefix(line, "  debug vars: ")
		case strings.HasPrefix(line, "  receipts signed by "):
			b.issuer, _, _ = strings.Cut(strings.TrimPrefix(line, "  receipts signed by "), " ")
		case strings.HasPrefix(line, "  pay for one:"):
			b.text = text.String()
			return b, nil
		}
	}
	return b, fmt.Errorf("banner ended early (%v):\n%s", sc.Err(), text.String())
}

// testSlowSession is how long demo session 2 takes to answer in the tests'
// servers: still the slowest session, without holding each test that
// reaches it for the demo's 1.5 s.
const testSlowSession = "250ms"

// startServer runs the server on a free loopback port and returns its
// base URL, its log, and a stop function that shuts it down and returns
// run's error.
func startServer(t *testing.T, args ...string) (base string, log *syncBuffer, stop func() error) {
	t.Helper()
	b, log, stop := startServerBanner(t, args...)
	return b.base, log, stop
}

// startServerBanner is startServer that returns the parsed banner.
func startServerBanner(t *testing.T, args ...string) (b banner, log *syncBuffer, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	log = new(syncBuffer)
	done := make(chan error, 1)
	base := []string{"-addr", "127.0.0.1:0", "-slow-session", testSlowSession}
	if slices.Contains(args, "-workers") {
		base = base[:2] // a panel runs no demo worker to slow
	}
	go func() {
		err := run(ctx, append(base, args...), noEnv, pw, log)
		pw.CloseWithError(err)
		done <- err
	}()
	b, err := readBanner(pr)
	if err != nil {
		cancel()
		t.Fatalf("%v; run: %v; log:\n%s", err, <-done, log)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	var once sync.Once
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return b, log, stop
}

func TestRun_endToEnd(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	cancel() // serve nothing: print the banner and stop
	if err := run(ctx, []string{"-addr", "127.0.0.1:0", "-api-key", "k1", "-pay-to", "0x1111111111111111111111111111111111111111",
		"-integration", "zed=k3", "-integration", "acme=k2"}, noEnv, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	b, err := readBanner(&out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.ParseEd25519Key(b.issuer); err != nil || b.debug != "" {
		t.Errorf("banner names key %q (%v) and debug URL %q, want a key ParseEd25519Key reads and no debug URL", b.issuer, err, b.debug)
	}
	for _, want := range []string{
		"Authorization: Bearer k1", "curl -s http://127.0.0.1:", "/api/v3/validate", "other integrations: acme, zed",
		"/api/v4/trust -H 'Authorization: Bearer k1'", `"receipt":{"mode":"detached"`, "> trust.json\n", "RECEIPT_ID=$(grep -o",
		"(paste the lines in order in the repository's directory, where go run finds ./examples/verify-receipt;\n",
		"/api/v4/receipt/$RECEIPT_ID -H 'Authorization: Bearer k1' > receipt.json\n",
		"/api/v4/receipt/$RECEIPT_ID/proof -H 'Authorization: Bearer k1' > proof.json\n",
		"go run ./examples/verify-receipt -key " + b.issuer + " receipt.json -proof proof.json\n", "state: memory",
		"/api/v4/x402/trust       $0.005 (5000 atomic units)",
		"(adaptive trust calls: $0.001 a run with the upto scheme, 5 runs authorized, the runs launched settled)",
		"(trust calls in escrow too: auth-capture", "/x402/escrow/balance/ADDRESS)",
		"payTo 0x1111111111111111111111111111111111111111", "eip155:84532", "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
		"/api/v2/x402/validate    $0.001 (1000 atomic units)", "/api/v1/x402/delegate    $0.002 (2000 atomic units)",
	} {
		if !strings.Contains(b.text, want) {
			t.Errorf("banner lacks %q:\n%s", want, b.text)
		}
	}
}

func TestRun_flags(t *testing.T) {
	t.Parallel()
	var usage bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, noEnv, io.Discard, &usage); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"-addr HOST:PORT", "127.0.0.1:8080", "-api-key KEY", "demo-key", "-pay-to ADDRESS", defaultPayTo,
		"-integration NAME=KEY", "-signing-key FILE", "-receipts FILE", "-escrow-ledger FILE", "-reputation FILE", "-workers FILE", "-database-url URL",
		"-database-schema NAME", "-trial-rate N", "-trial-burst N", "-debug-addr HOST:PORT", "-trusted-proxy CIDR", "-public-url URL", "-slow-session D", "1.5s"} {
		if !strings.Contains(usage.String(), want) {
			t.Errorf("usage lacks %q:\n%s", want, usage.String())
		}
	}
	for _, args := range [][]string{
		{"-pay-to", "0x12"},
		{"-api-key", ""},
		{"-addr", "127.0.0.1:0", "extra"},
		{"-addr", "256.0.0.1:1"},
		{"-integration", "acme"},
		{"-integration", "acme=demo-key"},
		{"-integration", "demo=k2"},
		{"-integration", "a=k2", "-integration", "a=k3"},
		{"-trial-rate", "0"},
		{"-trial-rate", "-1"},
		{"-trial-burst", "0"},
		{"-slow-session", "-1s"},
		{"-database-schema", "s"},
		{"-receipts", "r.db", "-database-url", "postgres://x"},
		{"-escrow-ledger", "e.db", "-database-url", "postgres://x"},
		{"-reputation", "r.db", "-database-url", "postgres://x"},
		{"-workers", "missing-panel.yaml"},
		{"-signing-key", "signing.go"},
		{"-addr", "127.0.0.1:0", "-debug-addr", "256.0.0.1:1"},
		{"-trusted-proxy", "proxy.example"},
		{"-public-url", "vouch.example"},
		{"-public-url", "ftp://vouch.example"},
		{"-public-url", "https://vouch.example/?x=1"},
	} {
		if err := run(context.Background(), args, noEnv, io.Discard, io.Discard); err == nil {
			t.Errorf("run %q succeeded, want an error", args)
		}
	}
}

func TestRun_addrInUse(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	err = run(t.Context(), []string{"-addr", taken.Addr().String()}, noEnv, new(strings.Builder), new(syncBuffer))
	if err == nil || !strings.HasPrefix(err.Error(), "-addr: ") || !strings.Contains(err.Error(), "give -addr another port") {
		t.Errorf("run with an -addr in use = %v, want an error naming -addr and how to choose another", err)
	}
}
