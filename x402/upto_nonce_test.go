package x402_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// uptoProofs signs one "upto" payment of the test offer and returns its
// proof as each of mutate rewrites its Permit2 authorization (as the
// payer's JSON writes it).
func uptoProofs(t *testing.T, mutate ...func(a map[string]any)) []string {
	t.Helper()
	o := uptoOffer(t)
	pr, err := newPayer(t).Pay(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var proofs []string
	for _, m := range mutate {
		var payload map[string]any
		if err := json.Unmarshal(pr.Payload, &payload); err != nil {
			t.Fatal(err)
		}
		m(payload["permit2Authorization"].(map[string]any))
		p := x402.PaymentPayload{X402Version: x402.Version2, Accepted: o}
		p.Payload, _ = json.Marshal(payload)
		v, err := x402.EncodeHeader(p)
		if err != nil {
			t.Fatal(err)
		}
		proofs = append(proofs, v)
	}
	return proofs
}

// A Permit2 nonce is a number: the same authorization with its nonce
// written with a leading zero is the same payment, and is not accepted
// again while its first use works.
func TestUpto_nonceWrittenTwoWaysIsOneProof(t *testing.T) {
	var runs atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	srv, fac := uptoServer(t, x402.Price{}, func(w http.ResponseWriter, r *http.Request) {
		if runs.Add(1) == 1 {
			close(entered)
			<-release
		}
		io.WriteString(w, "done")
	})
	var nonce string
	proofs := uptoProofs(t,
		func(a map[string]any) { nonce = a["nonce"].(string) },
		func(a map[string]any) { a["nonce"] = "0" + a["nonce"].(string) })
	first, second := proofs[0], proofs[1]
	done := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/metered", strings.NewReader("q"))
		req.Header.Set(x402.HeaderPaymentSignature, first)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	<-entered
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/metered", strings.NewReader("q"))
	req.Header.Set(x402.HeaderPaymentSignature, second)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	close(release)
	if r := <-done; r != nil {
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Errorf("first use: status %d, want 200", r.StatusCode)
		}
	}
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Errorf("the same authorization with nonce 0%s: status %d, want 402", nonce, resp.StatusCode)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times for one authorization, want once", n)
	}
	if s := fac.Settlements(); len(s) != 1 {
		t.Errorf("settlements = %+v, want one", s)
	}
}
