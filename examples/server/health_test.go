package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// getReady serves GET /readyz from h and returns its status and body.
func getReady(t *testing.T, h *health) (int, readiness) {
	t.Helper()
	mux := http.NewServeMux()
	h.register(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	var rd readiness
	if err := json.Unmarshal(rec.Body.Bytes(), &rd); err != nil {
		t.Fatalf("/readyz body %q: %v", rec.Body, err)
	}
	return rec.Code, rd
}

func TestHealth_ready(t *testing.T) {
	t.Parallel()
	quiet := slog.New(slog.DiscardHandler)
	ok := routertest.Verdict(router.VerdictValid)
	fail := routertest.Fail(errors.New("model down"))
	newEngine := func(t *testing.T, w router.Worker) *router.Engine {
		e, err := router.NewEngine([]router.Session{{ID: 1, Worker: w}, {ID: 2, Worker: w}}, router.WithHealth(1, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}

	t.Run("ready", func(t *testing.T) {
		status, rd := getReady(t, &health{sessions: newEngine(t, ok), log: quiet})
		want := readiness{Status: "ready", Stores: "ok", Sessions: "2 of 2 healthy"}
		if diff := cmp.Diff(want, rd); status != http.StatusOK || diff != "" {
			t.Errorf("status %d, body (-want +got):\n%s", status, diff)
		}
	})
	t.Run("no healthy session", func(t *testing.T) {
		e := newEngine(t, fail)
		for _, id := range []router.SessionID{1, 2} { // one failure each sends both to cool down
			_, _ = e.ValidateV2(context.Background(), &router.ValidateV2Request{SessionID: id, ValidateTask: router.ValidateTask{
				Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"s"`)}}})
		}
		status, rd := getReady(t, &health{sessions: e, log: quiet})
		want := readiness{Status: "not_ready", Stores: "ok", Sessions: "0 of 2 healthy"}
		if diff := cmp.Diff(want, rd); status != http.StatusServiceUnavailable || diff != "" {
			t.Errorf("status %d, body (-want +got):\n%s", status, diff)
		}
	})
	t.Run("half open after the cooldown", func(t *testing.T) {
		// Every session failed, and its cooldown (a nanosecond here) is
		// over: the next call tries it, so the server is ready again and
		// a load balancer sends it that call.
		e, err := router.NewEngine([]router.Session{{ID: 1, Worker: fail}, {ID: 2, Worker: fail}}, router.WithHealth(1, time.Nanosecond))
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []router.SessionID{1, 2} {
			_, _ = e.ValidateV2(context.Background(), &router.ValidateV2Request{SessionID: id, ValidateTask: router.ValidateTask{
				Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"s"`)}}})
		}
		status, rd := getReady(t, &health{sessions: e, log: quiet})
		want := readiness{Status: "ready", Stores: "ok", Sessions: "0 of 2 healthy, 2 half open"}
		if diff := cmp.Diff(want, rd); status != http.StatusOK || diff != "" {
			t.Errorf("status %d, body (-want +got):\n%s", status, diff)
		}
	})
	t.Run("stores unreachable", func(t *testing.T) {
		down := func(context.Context) error { return errors.New("connection refused") }
		status, rd := getReady(t, &health{sessions: newEngine(t, ok), ping: down, log: quiet})
		want := readiness{Status: "not_ready", Stores: "unreachable", Sessions: "2 of 2 healthy"}
		if diff := cmp.Diff(want, rd); status != http.StatusServiceUnavailable || diff != "" {
			t.Errorf("status %d, body (-want +got):\n%s", status, diff)
		}
	})
}

// idShape is a request id with each hexadecimal digit after its prefix
// ("req_") replaced by x: ids of one form have one shape.
func idShape(id string) string {
	prefix, rest, _ := strings.Cut(id, "_")
	return prefix + "_" + strings.Map(func(r rune) rune {
		if '0' <= r && r <= '9' || 'a' <= r && r <= 'f' {
			return 'x'
		}
		return r
	}, rest)
}

// TestRun_getRoutesRefuseOtherMethods: the routes the demo serves beside
// the library's handlers answer another method than GET and HEAD 405
// with Allow, as the library's routes do, not the router's 404; and each
// answer carries a request id of the form of the library's routes' ids.
func TestRun_getRoutesRefuseOtherMethods(t *testing.T) {
	t.Parallel()
	base, _, _ := startServer(t)
	ping, err := http.Get(base + "/api/v1/ping")
	if err != nil {
		t.Fatal(err)
	}
	ping.Body.Close()
	shape := idShape(ping.Header.Get("X-Request-Id"))
	if !strings.HasPrefix(shape, "req_x") {
		t.Fatalf("GET /api/v1/ping: X-Request-Id %q, want req_ and hex digits", ping.Header.Get("X-Request-Id"))
	}
	for _, path := range []string{"/healthz", "/readyz", "/x402/escrow/balance/0x000000000000000000000000000000000000dEaD"} {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			req, _ := http.NewRequest(method, base+path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s %s = %d, want 200", method, path, resp.StatusCode)
			}
			if id := resp.Header.Get("X-Request-Id"); idShape(id) != shape {
				t.Errorf("%s %s: X-Request-Id %q, want one of the form of /api/v1/ping's", method, path, id)
			}
		}
		for _, method := range []string{http.MethodPost, http.MethodDelete} {
			req, _ := http.NewRequest(method, base+path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var got problem.Details
			err = json.NewDecoder(resp.Body).Decode(&got)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s %s: %d, body not a problem: %v", method, path, resp.StatusCode, err)
			}
			want := problem.Details{
				Type: problem.TypePrefix + "method_not_allowed", Title: "Method Not Allowed", Status: http.StatusMethodNotAllowed,
				Detail: method + " " + path + " is not served; use GET, HEAD", Instance: path,
				Code: problem.CodeMethodNotAllowed, RequestID: resp.Header.Get("X-Request-Id"),
			}
			if diff := cmp.Diff(want, got); diff != "" || resp.Header.Get("Allow") != "GET, HEAD" || want.RequestID == "" {
				t.Errorf("%s %s: Allow %q, problem (-want +got):\n%s", method, path, resp.Header.Get("Allow"), diff)
			}
			if idShape(want.RequestID) != shape {
				t.Errorf("%s %s: request id %q, want one of the form of /api/v1/ping's", method, path, want.RequestID)
			}
		}
	}
}
