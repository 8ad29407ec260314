package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/unixtest"
)

// serveUnix serves s on a Unix domain socket, as behind a reverse proxy
// that reaches the server on a socket file, and returns a function that
// posts body to path there with headers as name, value pairs, returning
// the caller the endpoint saw and whether the answer was replayed.
func serveUnix(t *testing.T, s http.Handler) func(body string, headers ...string) (caller string, replayed bool) {
	t.Helper()
	hc := unixtest.NewServer(t, s)
	return func(body string, headers ...string) (string, bool) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://proxy/trial", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Add(headers[i], headers[i+1])
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var got struct{ Caller string }
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &got) != nil {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		return got.Caller, resp.Header.Get(httpapi.HeaderIdempotentReplayed) == "true"
	}
}

// TestServer_unixProxyKeepsCallersApart: a reverse proxy that reaches
// the server on a Unix domain socket has no IP address for
// TrustedProxies to list, so every client behind it was one caller,
// "ip:@": one client reusing another's Idempotency-Key was given the
// other's answer. With TrustUnixProxy, the clients are told apart by
// the address the proxy names, as behind a listed proxy; without it, the
// headers are not believed.
func TestServer_unixProxyKeepsCallersApart(t *testing.T) {
	type answer struct {
		Caller   string
		Replayed bool
	}
	post := serveUnix(t, newTrialServer(t, httpapi.Config{TrialLimit: httpapi.TrialLimit{Rate: rate.Inf}, TrustUnixProxy: true}))
	call := func(headers ...string) answer {
		caller, replayed := post(`{"n":1}`, headers...)
		return answer{caller, replayed}
	}
	steps := []struct {
		who     string
		headers []string
		want    answer
	}{
		{"client a", []string{"Idempotency-Key", "k", "X-Forwarded-For", "198.51.100.1"}, answer{Caller: "ip:198.51.100.1"}},
		{"client b, reusing a's key", []string{"Idempotency-Key", "k", "X-Forwarded-For", "198.51.100.2"}, answer{Caller: "ip:198.51.100.2"}},
		{"client a's retry", []string{"Idempotency-Key", "k", "X-Forwarded-For", "198.51.100.1"}, answer{Caller: "ip:198.51.100.1", Replayed: true}},
		{"a client named by Forwarded", []string{"Forwarded", `for="[2001:db8::1]:4711"`}, answer{Caller: "ip:2001:db8::1"}},
	}
	for _, step := range steps {
		if diff := cmp.Diff(step.want, call(step.headers...)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step.who, diff)
		}
	}
	untrusted := serveUnix(t, newTrialServer(t, httpapi.Config{TrialLimit: httpapi.TrialLimit{Rate: rate.Inf}}))
	if caller, _ := untrusted(`{}`, "X-Forwarded-For", "198.51.100.1"); caller == "ip:198.51.100.1" {
		t.Errorf("without TrustUnixProxy, the socket's peer named the client %q", caller)
	}
}
