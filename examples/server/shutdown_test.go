package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/boltstore"
	"github.com/vouchkit/vouch/x402/evm"
)

// blockedServer is the server of the shutdown tests, on a panel whose one
// chat worker holds each request until the test releases it (or the
// request ends).
type blockedServer struct {
	srv     *server
	base    string
	log     *syncBuffer
	arrived chan struct{} // a request reached the worker
	ended   chan struct{} // a held request ended without being released
	release chan struct{} // closed to let the held requests answer
	cancel  context.CancelFunc
	served  chan error
	dir     string
}

// startBlocked starts the server with args on a blocking worker, its
// state in bbolt files of a new directory.
func startBlocked(t *testing.T, args ...string) *blockedServer {
	t.Helper()
	b := &blockedServer{arrived: make(chan struct{}, 16), ended: make(chan struct{}, 16), release: make(chan struct{}), served: make(chan error, 1), dir: t.TempDir(), log: new(syncBuffer)}
	chat := &chatServer{verdicts: map[string]string{"judge": "VALID"}}
	worker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.arrived <- struct{}{}
		select {
		case <-b.release:
		case <-r.Context().Done():
			b.ended <- struct{}{}
			return
		}
		chat.ServeHTTP(w, r)
	}))
	t.Cleanup(worker.Close)
	panel := fmt.Sprintf(`{"sessions": [{"id": 1, "pool": "a", "worker": {"base_url": %q, "model": "judge"}}]}`, worker.URL+"/v1")
	path := filepath.Join(b.dir, "panel.json")
	if err := os.WriteFile(path, []byte(panel), 0o600); err != nil {
		t.Fatal(err)
	}
	args = append([]string{"-workers", path, "-signing-key", filepath.Join(b.dir, "key.json"),
		"-receipts", filepath.Join(b.dir, "receipts.db"), "-escrow-ledger", filepath.Join(b.dir, "escrow.db")}, args...)
	cfg, err := parseFlags(args, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(b.log, nil))
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	if b.srv, err = newServer(ctx, cfg, log); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.base = "http://" + ln.Addr().String()
	go func() {
		err := serve(ctx, log, b.srv, ln, nil, nil)
		// As run does once serve returns.
		b.srv.obs.close()
		b.srv.state.close()
		b.served <- err
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-b.release:
		default:
			close(b.release)
		}
	})
	return b
}

// answer is what a client of the shutdown tests got.
type answer struct {
	status int
	body   string
	// payment is what its payment response reports: the state of an
	// escrowed payment, "settled" of another, "" without one.
	payment string
	err     error
}

// post sends body to path of b with c (and the API key, but to a paid
// route) in the background and returns where its answer arrives.
func (b *blockedServer) post(c *http.Client, path, body string) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, b.base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if !strings.Contains(path, "/x402/") {
			req.Header.Set("Authorization", "Bearer "+defaultAPIKey)
		}
		resp, err := c.Do(req)
		if err != nil {
			out <- answer{err: err}
			return
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		a := answer{status: resp.StatusCode, body: string(data), err: err}
		if h := resp.Header.Get(x402.HeaderPaymentResponse); h != "" {
			a.payment = "settled"
			if sr, err := x402.DecodeSettleResponse(h); err == nil {
				if e, ok := x402.EscrowFromSettlement(sr); ok {
					a.payment = string(e.State)
				}
			}
		}
		out <- a
	}()
	return out
}

// A call whose worker outlasts the shutdown grace is cancelled: its
// client is answered 503 before the server returns and closes its state,
// an auth-capture hold behind it is voided, not left held, and the server
// reports a clean stop.
func TestServe_cancelsCallsPastTheGrace(t *testing.T) {
	before := goleak.IgnoreCurrent()
	hc := &http.Transport{}
	t.Cleanup(func() { // once the server's cleanups have run
		hc.CloseIdleConnections()
		goleak.VerifyNone(t, before)
	})
	b := startBlocked(t)
	b.srv.grace = 0 // the grace is over as soon as the shutdown begins
	payer, err := evm.NewPayer(strings.Repeat("49", 32))
	if err != nil {
		t.Fatal(err)
	}
	escrowed := &http.Client{Transport: &x402.Transport{Base: hc, Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	exact := &http.Client{Transport: &x402.Transport{Base: hc, Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeExact}, MaxAmount: 10000}}}
	call := `{"mode":"validation","policy":"fast","task":{"type":"tool_output","claimed_result":"17 * 3 = 51"}}`
	answers := map[string]<-chan answer{
		"free":    b.post(&http.Client{Transport: hc}, "/api/v4/trust", call),
		"exact":   b.post(exact, "/api/v4/x402/trust", call),
		"escrow":  b.post(escrowed, "/api/v4/x402/trust", call),
		"v3 free": b.post(&http.Client{Transport: hc}, "/api/v3/validate", `{"claim":{"type":"tool_output","output":"17 * 3 = 51"},"consensus":{"replicas":1}}`),
	}
	for range answers {
		<-b.arrived
	}
	b.cancel()
	err = <-b.served
	close(b.release) // too late: the server has stopped
	if err != nil {
		t.Errorf("serve = %v, want nil", err)
	}
	for name, ch := range answers {
		a := <-ch
		// The escrowed call reports its hold voided; the others, nothing.
		want := ""
		if name == "escrow" {
			want = string(x402.EscrowVoided)
		}
		if a.err != nil || a.status != http.StatusServiceUnavailable || a.payment != want {
			t.Errorf("%s: %d %s, payment %q (%v); want 503, payment %q", name, a.status, a.body, a.payment, a.err, want)
		}
	}
	if strings.Contains(b.log.String(), "database not open") {
		t.Errorf("the state was written to once closed:\n%s", b.log)
	}
	l, err := boltstore.Open(filepath.Join(b.dir, "escrow.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held, err := l.Unfinished(context.Background(), 0)
	if err != nil || len(held) != 0 {
		t.Errorf("payments left held: %+v (%v), want none", held, err)
	}
}
