package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The proof of scale-out: two server processes on one PostgreSQL database
// behave as one server. It needs a database: VOUCH_TEST_DATABASE_URL
// (eval "$(scripts/pg-test.sh start)"); without one it is skipped, except
// under CI, where it fails.

// databaseURL returns the test database's URL, or skips the test.
func databaseURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv("VOUCH_TEST_DATABASE_URL")
	switch {
	case u != "":
		return u
	case os.Getenv("CI") != "":
		t.Fatal("VOUCH_TEST_DATABASE_URL is not set; CI must run this test (scripts/pg-test.sh start)")
	default:
		t.Skip(`VOUCH_TEST_DATABASE_URL is not set; run eval "$(scripts/pg-test.sh start)" first`)
	}
	return ""
}

// freshSchema returns the name of a new schema, dropped when the test ends.
func freshSchema(t *testing.T, dbURL string) string {
	t.Helper()
	schema := "scaleout_" + strings.ToLower(rand.Text()[:12])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dbURL)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return schema
}

// buildServer builds this command once, into a temporary directory.
func buildServer(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "server")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race") // shares the test binary's build cache
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// process is a server running as a process of its own.
type process struct {
	name string
	cmd  *exec.Cmd
	banner
	log    *syncBuffer // its stderr
	exited chan struct{}
	err    error // of Wait, once exited is closed
}

// startProcess runs bin on a free loopback port, with debug vars on
// another, and reads its banner. The process is stopped (SIGTERM) when the
// test ends.
func startProcess(t *testing.T, name, bin string, args ...string) *process {
	t.Helper()
	p := &process{name: name, log: new(syncBuffer), exited: make(chan struct{})}
	p.cmd = exec.Command(bin, append([]string{"-addr", "127.0.0.1:0", "-debug-addr", "127.0.0.1:0"}, args...)...)
	p.cmd.Stderr = p.log
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b, berr := readBanner(stdout)
	go func() {
		_, _ = io.Copy(io.Discard, stdout)
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	if berr != nil {
		p.kill()
		t.Fatalf("server %s: %v; log:\n%s", name, berr, p.log)
	}
	p.banner = b
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("server %s: %v; log:\n%s", name, err, p.log)
		}
	})
	return p
}

// stop ends the process with SIGTERM, or SIGKILL if it has not exited
// within the shutdown grace and a little more, and returns how it ended.
func (p *process) stop() error {
	select {
	case <-p.exited:
		return nil // killed by the test, or already stopped
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(shutdownGrace + 5*time.Second):
		p.kill()
		return fmt.Errorf("did not stop on SIGINT")
	}
	return p.err
}

// kill ends the process with SIGKILL and waits for it.
func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// call is one request's answer.
type call struct {
	status   int
	replayed bool
	body     []byte
}

// send POSTs body to url with the API key and the headers given.
func send(ctx context.Context, hc *http.Client, url, key, body string, header map[string]string) (call, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return call{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return call{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return call{}, err
	}
	return call{status: resp.StatusCode, replayed: resp.Header.Get("Idempotent-Replayed") == "true", body: data}, nil
}

func mustSend(t *testing.T, url, key, body string, header map[string]string) call {
	t.Helper()
	c, err := send(context.Background(), http.DefaultClient, url, key, body, header)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fetch GETs a receipt as the integration of key.
func fetch(t *testing.T, base, id, key string) call {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+receipt.ReceiptPath+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return call{status: resp.StatusCode, body: data}
}

// executions returns the worker executions for id on p.
func (p *process) executions(t *testing.T, id string) int64 {
	t.Helper()
	return readVars(t, p.debug).ByCallID[id]
}

func TestScaleOut_twoServers(t *testing.T) {
	dbURL := databaseURL(t)
	schema := freshSchema(t, dbURL)
	bin := buildServer(t)
	dir := t.TempDir()
	common := []string{
		"-signing-key", filepath.Join(dir, "signing.key"),
		"-integration", "acme=acme-key", "-integration", "zed=zed-key",
		"-trial-burst", "5", "-trial-rate", "0.001",
	}
	args := append([]string{"-database-url", dbURL, "-database-schema", schema}, common...)
	a := startProcess(t, "A", bin, args...)
	b := startProcess(t, "B", bin, args...)
	if a.issuer != b.issuer || !strings.Contains(a.text, "schema "+schema) {
		t.Fatalf("A signs with %s and B with %s, want one key; A's banner:\n%s", a.issuer, b.issuer, a.text)
	}
	// C keeps its state in memory: the control that shows what B refuses
	// is refused because of the shared database.
	c := startProcess(t, "C", bin, common...)

	t.Run("idempotency key used on A replays on B", func(t *testing.T) {
		body := `{"claim":{"type":"tool_output","output":"17 * 3 = 51"},"metadata":{"call_id":"idem-1"},"consensus":{"replicas":3}}`
		key := map[string]string{"Idempotency-Key": "key-1"}
		first := mustSend(t, a.base+"/api/v3/validate", defaultAPIKey, body, key)
		again := mustSend(t, b.base+"/api/v3/validate", defaultAPIKey, body, key)
		if first.status != http.StatusOK || first.replayed || again.status != http.StatusOK || !again.replayed || !bytes.Equal(first.body, again.body) {
			t.Errorf("A answered %d (replayed %t), B %d (replayed %t), bodies equal %t; want 200, then B replaying A's body",
				first.status, first.replayed, again.status, again.replayed, bytes.Equal(first.body, again.body))
		}
		if na, nb := a.executions(t, "idem-1"), b.executions(t, "idem-1"); na != 3 || nb != 0 {
			t.Errorf("executions: A %d, B %d; want 3 on A (one per replica) and none on B", na, nb)
		}
		if ctl := mustSend(t, c.base+"/api/v3/validate", defaultAPIKey, body, key); ctl.status != http.StatusOK || ctl.replayed || c.executions(t, "idem-1") != 3 {
			t.Errorf("control: C, without the database, answered %d (replayed %t) after %d executions, want a fresh run of 3",
				ctl.status, ctl.replayed, c.executions(t, "idem-1"))
		}
		other := `{"claim":{"type":"tool_output","output":"17 * 3 = 50"},"consensus":{"replicas":3}}`
		if c := mustSend(t, b.base+"/api/v3/validate", defaultAPIKey, other, key); c.status != http.StatusUnprocessableEntity {
			t.Errorf("the key reused on B with another body = %d %s, want 422", c.status, c.body)
		}
	})

	t.Run("one key sent to A and B at once runs the workers once", func(t *testing.T) {
		// Session 2 answers after 1.5 s and return_all waits for it, so
		// the two requests overlap.
		body := `{"claim":{"type":"tool_output","output":"6 × 7 = 42"},"metadata":{"call_id":"idem-2"},` +
			`"consensus":{"replicas":3,"session_pool":[1,2,3],"disagreement_policy":"return_all"}}`
		key := map[string]string{"Idempotency-Key": "key-2"}
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			got   [2]call
			errs  [2]error
		)
		for i, p := range []*process{a, b} {
			wg.Go(func() {
				<-start
				// A server that cannot wait any longer answers 409: retry.
				for range 20 {
					got[i], errs[i] = send(context.Background(), http.DefaultClient, p.base+"/api/v3/validate", defaultAPIKey, body, key)
					if errs[i] != nil || got[i].status != http.StatusConflict {
						return
					}
					time.Sleep(250 * time.Millisecond)
				}
			})
		}
		close(start)
		wg.Wait()
		for i, p := range []*process{a, b} {
			if errs[i] != nil || got[i].status != http.StatusOK {
				t.Fatalf("%s answered %d %s (%v), want 200", p.name, got[i].status, got[i].body, errs[i])
			}
		}
		if !bytes.Equal(got[0].body, got[1].body) || got[0].replayed == got[1].replayed {
			t.Errorf("answers replayed %t and %t, equal %t; want one run and one replay of the same body",
				got[0].replayed, got[1].replayed, bytes.Equal(got[0].body, got[1].body))
		}
		if n := a.executions(t, "idem-2") + b.executions(t, "idem-2"); n != 3 {
			t.Errorf("executions on A and B: %d, want 3 (one call of three replicas)", n)
		}
	})

	t.Run("payment replayed from A to B is refused and settles once", func(t *testing.T) {
		payer, err := evm.NewPayer(strings.Repeat("47", 32))
		if err != nil {
			t.Fatal(err)
		}
		rec := &proofRecorder{base: http.DefaultTransport}
		hc := &http.Client{Transport: &x402.Transport{Base: rec, Payer: payer, Policy: x402.Policy{MaxAmount: 10000}}}
		body := `{"session_id":1,"claim":{"type":"tool_output","output":"6 × 7 = 42"},"metadata":{"call_id":"pay-1"}}`
		paid, err := send(context.Background(), hc, a.base+"/api/v2/x402/validate", "", body, nil)
		proof := rec.proof()
		if err != nil || paid.status != http.StatusOK || proof == "" {
			t.Fatalf("paid call on A = %d %s (%v), proof %q; want 200 with a proof sent", paid.status, paid.body, err, proof)
		}
		replay := mustSend(t, b.base+"/api/v2/x402/validate", "", body, map[string]string{x402.HeaderPaymentSignature: proof})
		if replay.status != http.StatusPaymentRequired {
			t.Errorf("the proof replayed on B = %d %s, want 402", replay.status, replay.body)
		}
		va, vb := readVars(t, a.debug), readVars(t, b.debug)
		if va.Settled != 1 || vb.Settled != 0 || va.ByCallID["pay-1"] != 1 || vb.ByCallID["pay-1"] != 0 {
			t.Errorf("settlements A %d, B %d; executions A %d, B %d; want one settlement and one execution, on A",
				va.Settled, vb.Settled, va.ByCallID["pay-1"], vb.ByCallID["pay-1"])
		}
		ctl := mustSend(t, c.base+"/api/v2/x402/validate", "", body, map[string]string{x402.HeaderPaymentSignature: proof})
		if vc := readVars(t, c.debug); ctl.status != http.StatusOK || vc.Settled != 1 {
			t.Errorf("control: C, without the database, answered the replayed proof %d and settled %d, want 200 and 1", ctl.status, vc.Settled)
		}
	})

	t.Run("receipt issued on A is fetched and verified on B", func(t *testing.T) {
		shared := mustSend(t, a.base+"/api/v4/trust", defaultAPIKey, `{"mode":"validation","policy":"safe",`+
			`"task":{"type":"tool_output","claimed_result":"17 * 3 = 51"},`+
			`"receipt":{"mode":"inline","visibility":"shared","counterparties":["acme"],"include":{"output_hash":true}}}`, nil)
		private := mustSend(t, a.base+"/api/v4/trust", defaultAPIKey, `{"mode":"validation","policy":"fast",`+
			`"task":{"type":"tool_output","claimed_result":"2 + 2 = 4"},"receipt":{"mode":"detached"}}`, nil)
		var s, p struct {
			Receipt struct {
				ReceiptID string `json:"receipt_id"`
			} `json:"receipt"`
		}
		if json.Unmarshal(shared.body, &s) != nil || json.Unmarshal(private.body, &p) != nil || s.Receipt.ReceiptID == "" || p.Receipt.ReceiptID == "" {
			t.Fatalf("trust calls on A = %d %s and %d %s, want receipts", shared.status, shared.body, private.status, private.body)
		}
		tests := []struct {
			id, who, key string
			want         int
		}{
			{s.Receipt.ReceiptID, "owner", defaultAPIKey, http.StatusOK},
			{s.Receipt.ReceiptID, "counterparty", "acme-key", http.StatusOK},
			{s.Receipt.ReceiptID, "stranger", "zed-key", http.StatusNotFound},
			{p.Receipt.ReceiptID, "owner", defaultAPIKey, http.StatusOK},
			{p.Receipt.ReceiptID, "former counterparty", "acme-key", http.StatusNotFound},
			{receipt.NewID(), "owner of nothing", defaultAPIKey, http.StatusNotFound},
		}
		key, err := receipt.ParseEd25519Key(b.issuer)
		if err != nil {
			t.Fatal(err)
		}
		verifier, err := receipt.NewVerifier([]receipt.PublicKey{key})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			got := fetch(t, b.base, tt.id, tt.key)
			if got.status != tt.want {
				t.Errorf("%s fetching %s on B = %d %s, want %d", tt.who, tt.id, got.status, got.body, tt.want)
				continue
			}
			if got.status != http.StatusOK {
				continue
			}
			if _, err := verifier.Verify(got.body, receipt.Originals{}, time.Time{}); err != nil {
				t.Errorf("receipt %s from B with B's printed key: %v", tt.id, err)
			}
			vr := mustSend(t, b.base+receipt.VerifyPath, tt.key, `{"receipt":`+string(got.body)+`}`, nil)
			if vr.status != http.StatusOK || !bytes.Contains(vr.body, []byte(`"valid":true`)) {
				t.Errorf("verify_receipt on B = %d %s, want valid", vr.status, vr.body)
			}
		}
	})

	t.Run("trial calls over A and B meet the limit at the configured count", func(t *testing.T) {
		// The router's trial routes and the trust trial route draw from the
		// one bucket per caller in the database: five, then none.
		v2 := `{"session_id":1,"claim":{"type":"tool_output","output":"1 + 1 = 2"}}`
		tr := `{"mode":"validation","policy":"fast","task":{"claimed_result":"1 + 1 = 2"}}`
		var statuses []int
		for i := range 12 {
			p, url, body := a, "/api/v2/trial/validate", v2
			switch i % 3 {
			case 1:
				p = b
			case 2:
				p, url, body = b, "/api/v4/trial/trust", tr
			}
			statuses = append(statuses, mustSend(t, p.base+url, "", body, nil).status)
		}
		want := []int{200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429}
		if !slices.Equal(statuses, want) {
			t.Errorf("trial statuses over A and B = %v, want %v", statuses, want)
		}
	})

	t.Run("SIGKILL of A in a load loses no acknowledged receipt", func(t *testing.T) {
		var (
			mu     sync.Mutex
			acked  = map[string][]byte{} // receipt id → the inline receipt
			failed int
		)
		enough := make(chan struct{})
		var once sync.Once
		hc := &http.Client{Timeout: 30 * time.Second}
		var wg sync.WaitGroup
		for w := range 16 {
			wg.Go(func() {
				for i := 0; ; i++ {
					body := fmt.Sprintf(`{"mode":"validation","policy":"fast","task":{"claimed_result":"%d + %d = %d"},"receipt":{"mode":"inline"}}`, w, i, w+i)
					c, err := send(context.Background(), hc, a.base+"/api/v4/trust", defaultAPIKey, body, nil)
					mu.Lock()
					if err != nil || c.status != http.StatusOK {
						failed++
						mu.Unlock()
						return // A is gone
					}
					var r struct{ Receipt json.RawMessage }
					if err := json.Unmarshal(c.body, &r); err == nil {
						if issued, err := receipt.Parse(r.Receipt); err == nil {
							acked[issued.ReceiptID] = r.Receipt
						}
					}
					if len(acked) >= 200 {
						once.Do(func() { close(enough) })
					}
					mu.Unlock()
				}
			})
		}
		select {
		case <-enough:
		case <-time.After(60 * time.Second):
			t.Error("fewer than 200 receipts in a minute")
		}
		a.kill()
		wg.Wait()
		if failed == 0 {
			t.Errorf("no call failed: A was not killed during the load")
		}
		lost := 0
		for id, data := range acked {
			if got := fetch(t, b.base, id, defaultAPIKey); got.status != http.StatusOK || !bytes.Equal(got.body, data) {
				lost++
			}
		}
		t.Logf("%d receipts acknowledged before SIGKILL, %d calls cut off, %d lost", len(acked), failed, lost)
		if lost != 0 {
			t.Errorf("%d of %d acknowledged receipts are not on B", lost, len(acked))
		}
	})
}

// proofRecorder is a RoundTripper that remembers the last payment proof
// sent through it.
type proofRecorder struct {
	base http.RoundTripper
	mu   sync.Mutex
	last string
}

func (r *proofRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if v := req.Header.Get(x402.HeaderPaymentSignature); v != "" {
		r.mu.Lock()
		r.last = v
		r.mu.Unlock()
	}
	return r.base.RoundTrip(req)
}

func (r *proofRecorder) proof() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}
