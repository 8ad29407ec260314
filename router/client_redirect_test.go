package router_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// TestClient_redirectToAnotherHost checks that a Client refuses a
// redirect from its router to another host: an x402 Client would pay
// that host, which it was never given, and read its answer as the
// router's. The paid router behind the redirect settles nothing.
func TestClient_redirectToAnotherHost(t *testing.T) {
	ps := newPaidServer(t, &fakeService{})
	elsewhere := strings.Replace(ps.URL, "127.0.0.1", "localhost", 1)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer front.Close()

	c, err := router.NewClient(front.URL, router.WithClientVariant(router.VariantX402),
		router.WithHTTPClient(ps.payingClient(t, nil)), router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	err = c.Ping(t.Context())
	if err == nil || !strings.Contains(err.Error(), "redirect to another origin refused") {
		t.Errorf("Ping through a redirect to another host: %v, want the redirect refused", err)
	}
	if n := len(ps.fac.Settlements()); n != 0 {
		t.Errorf("the other host settled %d payments, want none", n)
	}
}
