package trust_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/internal/unixtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestHandler_unixProxyKeepsCallersApart: behind a reverse proxy that
// reaches the Handler on a Unix domain socket (httputil.ReverseProxy,
// which appends the client's address to X-Forwarded-For, as nginx does),
// two anonymous clients of the trial route, at 127.0.0.1 and 127.0.0.2,
// calling through the trust Client with the same Idempotency-Key, each
// get their own answer within their own allowance (one call an hour).
// Without WithTrustedUnixProxy, the socket's peer has no address to list
// and both were one caller: the second was refused 429.
func TestHandler_unixProxyKeepsCallersApart(t *testing.T) {
	f := new(fakeCaller)
	h, err := trust.NewHandler(f, trust.WithTrustedUnixProxy(), trust.WithTrialLimit(router.TrialLimit{Rate: rate.Every(time.Hour), Burst: 1}))
	if err != nil {
		t.Fatal(err)
	}
	target, _ := url.Parse("http://trust")
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = unixtest.NewServer(t, h).Transport
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)

	from := func(ip string) *trust.Client {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		hc := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
		return newClient(t, front.URL, trust.WithHTTPClient(hc), trust.WithClientVariant(router.VariantTrial), trust.WithRetry(router.RetryPolicy{}))
	}
	ctx := trust.WithIdempotencyKey(context.Background(), "order-1")
	for _, ip := range []string{"127.0.0.1", "127.0.0.2"} {
		if _, err := from(ip).Call(ctx, validationRequest()); err != nil {
			t.Errorf("the client at %s: %v", ip, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if diff := cmp.Diff([]string{"trial:ip:127.0.0.1", "trial:ip:127.0.0.2"}, f.callers); diff != "" {
		t.Errorf("the callers of the calls made (-want +got):\n%s", diff)
	}
}
