package httpapi_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// forwardedValue is v as RFC 7239 writes a value: a token as is, anything
// else as a quoted-string.
func forwardedValue(v string) string {
	token := v != ""
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
			token = false
		}
	}
	if token {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

// clientFrom returns a client whose connections come from the loopback
// address local.
func clientFrom(t *testing.T, local string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// idemAnswer is what the trial echo endpoint answered through a proxy.
type idemAnswer struct {
	Caller   string
	Replayed string
	Got      any
}

// behindProxy serves the trial echo endpoint, trusting the proxies
// trusted, behind a reverse proxy at 127.0.0.1 that sets the request's
// headers with set (given the client's address), and returns a function
// that posts body from the loopback address from, asking for host, with
// the Idempotency-Key "order-1".
func behindProxy(t *testing.T, trusted []netip.Prefix, set func(out *http.Request, client string)) func(from, host, body string) idemAnswer {
	t.Helper()
	s, err := httpapi.NewServer(httpapi.Config{
		Endpoints:      []httpapi.Endpoint{{Method: http.MethodPost, Path: "/trial", Access: httpapi.Trial, Prepare: echo}},
		TrialLimit:     httpapi.TrialLimit{Rate: rate.Inf},
		TrustedProxies: trusted,
	})
	if err != nil {
		t.Fatal(err)
	}
	backend := httptest.NewServer(s)
	t.Cleanup(backend.Close)
	target, err := url.Parse(backend.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		client, _, _ := net.SplitHostPort(pr.In.RemoteAddr)
		set(pr.Out, client)
	}})
	t.Cleanup(proxy.Close)
	return func(from, host, body string) idemAnswer {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, proxy.URL+"/trial", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(httpapi.HeaderIdempotencyKey, "order-1")
		resp, err := clientFrom(t, from).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a idemAnswer
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
			t.Fatalf("from %s: %d: %v", from, resp.StatusCode, err)
		}
		a.Replayed = resp.Header.Get(httpapi.HeaderIdempotentReplayed)
		return a
	}
}

// TestServer_quotedForwardedValuesNameNoOne: behind a trusted proxy that
// writes the Forwarded header as RFC 7239 asks (the client's address in
// for=, the Host it was asked for in host=, quoted when it is not a
// token), a client that asks for a Host such as "x,for=127.0.0.2" is
// still known by its own address: the comma and the for= are the quoted
// host's text. Otherwise it is taken for the client at 127.0.0.2, and
// gets that client's kept answer by reusing its Idempotency-Key.
func TestServer_quotedForwardedValuesNameNoOne(t *testing.T) {
	call := behindProxy(t, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, func(out *http.Request, client string) {
		out.Header.Set("Forwarded", "for="+forwardedValue(client)+";host="+forwardedValue(out.Host)+";proto=http")
	})
	victim := call("127.0.0.2", "api.example", `{"secret":"of 127.0.0.2"}`)
	if diff := cmp.Diff(idemAnswer{Caller: "ip:127.0.0.2", Got: map[string]any{"secret": "of 127.0.0.2"}}, victim); diff != "" {
		t.Fatalf("the first client's call (-want +got):\n%s", diff)
	}
	for i, host := range []string{"x,for=127.0.0.2", "x;for=127.0.0.2", `x,for="127.0.0.2"`} {
		from := "127.0.0." + strconv.Itoa(3+i)
		got := call(from, host, `{"secret":"of 127.0.0.2"}`)
		want := idemAnswer{Caller: "ip:" + from, Got: map[string]any{"secret": "of 127.0.0.2"}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("another client asking for Host %q (-want +got):\n%s", host, diff)
		}
	}
	if diff := cmp.Diff(idemAnswer{Caller: "ip:127.0.0.2", Replayed: "true", Got: map[string]any{"secret": "of 127.0.0.2"}},
		call("127.0.0.2", "api.example", `{"secret":"of 127.0.0.2"}`)); diff != "" {
		t.Errorf("the first client's retry (-want +got):\n%s", diff)
	}
}

// TestServer_mappedTrustedProxy: a trusted proxy listed by its
// IPv4-mapped address (::ffff:127.0.0.1, as a dual-stack socket shows
// it) is trusted as the IPv4 address it maps: its clients are told apart
// by the address it names, and one reusing another's Idempotency-Key
// and body gets its own answer, not the other's.
func TestServer_mappedTrustedProxy(t *testing.T) {
	for _, trusted := range []string{"::ffff:127.0.0.1/128", "::ffff:127.0.0.0/104"} {
		t.Run(trusted, func(t *testing.T) {
			call := behindProxy(t, []netip.Prefix{netip.MustParsePrefix(trusted)}, func(out *http.Request, client string) {
				out.Header.Set("X-Forwarded-For", client)
			})
			for _, from := range []string{"127.0.0.2", "127.0.0.3"} {
				want := idemAnswer{Caller: "ip:" + from, Got: map[string]any{"n": 1.0}}
				if diff := cmp.Diff(want, call(from, "api.example", `{"n":1}`)); diff != "" {
					t.Errorf("the client at %s (-want +got):\n%s", from, diff)
				}
			}
		})
	}
}
