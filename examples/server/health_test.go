package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
	t.Run("stores unreachable", func(t *testing.T) {
		down := func(context.Context) error { return errors.New("connection refused") }
		status, rd := getReady(t, &health{sessions: newEngine(t, ok), ping: down, log: quiet})
		want := readiness{Status: "not_ready", Stores: "unreachable", Sessions: "2 of 2 healthy"}
		if diff := cmp.Diff(want, rd); status != http.StatusServiceUnavailable || diff != "" {
			t.Errorf("status %d, body (-want +got):\n%s", status, diff)
		}
	})
}
