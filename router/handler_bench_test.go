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
)

// BenchmarkLoopback compares a validate v2 call through Client → Handler →
// Service over loopback with a bare net/http JSON echo of the same request
// (the baseline): the ratio of their ns/op is the cost of the router's
// HTTP layer.
func BenchmarkLoopback(b *testing.B) {
	req := requestFor(router.OpValidateV2).(*router.ValidateV2Request)

	b.Run("echo", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var v map[string]any
			if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(v)
		}))
		defer srv.Close()
		hc := srv.Client()
		b.ReportAllocs()
		for b.Loop() {
			body, _ := json.Marshal(req)
			resp, err := hc.Post(srv.URL, "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var out map[string]any
			if err := json.Unmarshal(data, &out); err != nil {
				b.Fatal(err)
			}
		}
	})

	b.Run("client-handler-service", func(b *testing.B) {
		h, _ := router.NewHandler(&fakeService{}, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "bench"})))
		srv := httptest.NewServer(h)
		defer srv.Close()
		c, err := router.NewClient(srv.URL, router.WithAPIKey(testKey), router.WithHTTPClient(srv.Client()))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.ValidateV2(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
