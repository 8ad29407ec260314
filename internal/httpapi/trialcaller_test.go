package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// TestServer_trialCallerNamesNone: a TrialCaller that names no caller
// for a request (the session header it reads is absent) leaves the
// request to the default caller, its client address, rather than to one
// caller "" that every such request shares, from any address, with its
// idempotency keys and rate limit; a request it names keeps its name.
func TestServer_trialCallerNamesNone(t *testing.T) {
	s := newTrialServer(t, httpapi.Config{
		TrialLimit:  httpapi.TrialLimit{Rate: rate.Inf},
		TrialCaller: func(r *http.Request) string { return r.Header.Get("X-Session") },
	})
	srv := httptest.NewServer(s)
	defer srv.Close()
	post := func(session string) (replayed bool, caller string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/trial", strings.NewReader(`{"n":1}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k")
		if session != "" {
			req.Header.Set("X-Session", session)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		w := httptest.NewRecorder()
		w.Body.Write(b)
		return resp.Header.Get(httpapi.HeaderIdempotentReplayed) != "", callerOf(t, w)
	}
	if replayed, caller := post("s1"); replayed || caller != "s1" {
		t.Errorf("with a session: replayed %t, caller %q; want a fresh answer for s1", replayed, caller)
	}
	if _, caller := post(""); !strings.HasPrefix(caller, "ip:") {
		t.Errorf("without a session: caller %q, want ip:<address>", caller)
	}
}

// TestServer_trialCallerNamedAsTheServerNames: a TrialCaller that passes
// on what the client sent (a session header) must not let a client name
// itself as the server names other callers: "key:alice", the trial
// caller of alice's credential, or "ip:<address>", an anonymous caller.
// Named so, a client would spend that caller's trial allowance and be
// given its kept answers. Such a name is not taken: the request is served
// as its default caller, its own address, and the name logged. A name
// that is the request's own (its credential's, its address) is its
// default caller, and logs nothing.
func TestServer_trialCallerNamedAsTheServerNames(t *testing.T) {
	var log bytes.Buffer
	srv := newServer(t, httpapi.Config{
		Logger:         slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		TrialLimit:     httpapi.TrialLimit{Rate: rate.Every(time.Hour), Burst: 2},
		TrialCaller:    func(r *http.Request) string { return r.Header.Get("X-Session") },
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		Endpoints:      []httpapi.Endpoint{{Method: http.MethodPost, Path: "/trial", Access: httpapi.Trial, Prepare: echo}},
	})
	type answer struct {
		Status   int
		Replayed bool
		Caller   string
	}
	post := func(headers ...string) answer {
		t.Helper()
		got := send(t, http.MethodPost, srv.URL+"/trial", `{"order":1}`, append([]string{"Idempotency-Key", "order-1"}, headers...)...)
		var body struct{ Caller string }
		if got.status == http.StatusOK {
			if err := json.Unmarshal([]byte(got.body), &body); err != nil {
				t.Fatalf("%d %s", got.status, got.body)
			}
		}
		return answer{got.status, got.header.Get(httpapi.HeaderIdempotentReplayed) == "true", body.Caller}
	}
	steps := []struct {
		who     string
		headers []string
		want    answer
	}{
		{"alice, on the trial route with her credential, naming herself", []string{"Authorization", "Bearer " + testKey, "X-Session", "key:alice", "X-Forwarded-For", "198.51.100.1"},
			answer{Status: http.StatusOK, Caller: "key:alice"}},
		{"an anonymous client, naming itself by its address", []string{"X-Session", "ip:198.51.100.2", "X-Forwarded-For", "198.51.100.2"},
			answer{Status: http.StatusOK, Caller: "ip:198.51.100.2"}},
		{"a stranger naming itself key:alice", []string{"X-Session", "key:alice", "X-Forwarded-For", "203.0.113.9"},
			answer{Status: http.StatusOK, Caller: "ip:203.0.113.9"}},
		{"a stranger naming itself as the anonymous client", []string{"X-Session", "ip:198.51.100.2", "X-Forwarded-For", "203.0.113.10"},
			answer{Status: http.StatusOK, Caller: "ip:203.0.113.10"}},
		{"alice again, her allowance her own", []string{"Authorization", "Bearer " + testKey, "X-Forwarded-For", "198.51.100.1"},
			answer{Status: http.StatusOK, Replayed: true, Caller: "key:alice"}},
		{"the anonymous client again, its allowance its own", []string{"X-Forwarded-For", "198.51.100.2"},
			answer{Status: http.StatusOK, Replayed: true, Caller: "ip:198.51.100.2"}},
		{"a client naming itself by a session", []string{"X-Session", "s1", "X-Forwarded-For", "203.0.113.11"},
			answer{Status: http.StatusOK, Caller: "s1"}},
	}
	for _, step := range steps {
		if diff := cmp.Diff(step.want, post(step.headers...)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step.who, diff)
		}
	}
	if n := strings.Count(log.String(), "the TrialCaller named a request as the server names other callers"); n != 2 {
		t.Errorf("%d warnings, want 2 (the two strangers):\n%s", n, log.String())
	}
}

// TestServer_trialCallerNameWithASpace: a TrialCaller name holds no
// space, which joins a caller and the credential it carries into the
// scope of its idempotency keys: a stranger naming itself "s1 key:alice"
// would otherwise share the kept answers of alice's session s1, made
// with her credential. Such a name is served as the request's default
// caller, and logged.
func TestServer_trialCallerNameWithASpace(t *testing.T) {
	var log bytes.Buffer
	srv := newServer(t, httpapi.Config{
		Logger:         slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		TrialLimit:     httpapi.TrialLimit{Rate: rate.Inf},
		TrialCaller:    func(r *http.Request) string { return r.Header.Get("X-Session") },
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")},
		Endpoints:      []httpapi.Endpoint{{Method: http.MethodPost, Path: "/trial", Access: httpapi.Trial, Prepare: echo}},
	})
	post := func(headers ...string) (replayed bool, caller string) {
		t.Helper()
		got := send(t, http.MethodPost, srv.URL+"/trial", `{"order":1}`, append([]string{"Idempotency-Key", "order-1"}, headers...)...)
		var body struct{ Caller string }
		if got.status != http.StatusOK || json.Unmarshal([]byte(got.body), &body) != nil {
			t.Fatalf("%d %s", got.status, got.body)
		}
		return got.header.Get(httpapi.HeaderIdempotentReplayed) == "true", body.Caller
	}
	if replayed, caller := post("Authorization", "Bearer "+testKey, "X-Session", "s1", "X-Forwarded-For", "198.51.100.1"); replayed || caller != "s1" {
		t.Fatalf("alice's session s1: replayed %t, caller %q", replayed, caller)
	}
	if replayed, caller := post("X-Session", "s1 key:alice", "X-Forwarded-For", "203.0.113.9"); replayed || caller != "ip:203.0.113.9" {
		t.Errorf("a stranger naming itself \"s1 key:alice\": replayed %t, caller %q; want its own answer as ip:203.0.113.9", replayed, caller)
	}
	if !strings.Contains(log.String(), "the TrialCaller named a request as the server names other callers") {
		t.Errorf("the name is not logged:\n%s", log.String())
	}
}
