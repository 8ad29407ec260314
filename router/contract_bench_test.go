package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// BenchmarkEngineLoopback measures a version 3 validate on three instant
// workers through Client → Handler → Engine over loopback, against a bare
// net/http server that decodes and echoes the same JSON body (the
// baseline) in the same run. The ratio of their ns/op is what the router's
// HTTP layer and engine cost over the least an HTTP JSON call costs.
//
//	go test -run='^$' -bench=BenchmarkEngineLoopback -benchtime=1s ./router
func BenchmarkEngineLoopback(b *testing.B) {
	req := &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{
			RequestID: "bench",
			Claim:     router.Claim{Type: "summary", Output: json.RawMessage(`"Paris is the capital of France."`)},
			Policy:    router.ValidatePolicy{Tier: router.TierSafe, Rules: []string{"consistency"}},
		},
		Consensus: router.ConsensusRequest{Replicas: 3},
	}

	b.Run("echo", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var v map[string]any
			if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(v)
		}))
		defer srv.Close()
		hc := srv.Client()
		b.ReportAllocs()
		for b.Loop() {
			body, err := json.Marshal(req)
			if err != nil {
				b.Fatal(err)
			}
			resp, err := hc.Post(srv.URL, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			data, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Fatal(err)
			}
			var out router.ValidateV3Request
			if err := json.Unmarshal(data, &out); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("client-handler-engine", func(b *testing.B) {
		v := routertest.Verdict(router.VerdictValid)
		e, err := router.NewEngine(routertest.Sessions(1, 3, v, v, v))
		if err != nil {
			b.Fatal(err)
		}
		h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{contractKey: "bench"})))
		if err != nil {
			b.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		c, err := router.NewClient(srv.URL, router.WithAPIKey(contractKey), router.WithHTTPClient(srv.Client()))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.ValidateV3(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			if resp.Verdict != router.VerdictValid {
				b.Fatalf("verdict = %q, want VALID", resp.Verdict)
			}
		}
	})
}
