package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
