package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
)

// TestRun_readyzModelsDown holds what README.md and docs/GUIDE.md say
// /readyz means: a session reads unhealthy once router's failure
// threshold of runs in a row (3 by default) have failed, not at its first
// failure. A panel of three models whose endpoint fails every request
// (each model unknown there: an answer that is not retried) serves over
// loopback; after each 3-replica call, all of whose replicas fail,
// /readyz and GET /api/v1/status are read. Two such calls leave the
// server ready, each session with 1, then 2, failures in a row; the
// third sends every session to cool down, and /readyz answers 503.
func TestRun_readyzModelsDown(t *testing.T) {
	t.Parallel()
	chat := &chatServer{verdicts: map[string]string{}} // no model: every request fails
	srv := httptest.NewServer(chat)
	defer srv.Close()
	panel := fmt.Sprintf(`{"sessions": [
  {"id": 1, "pool": "a", "worker": {"base_url": %[1]q, "model": "down-a"}},
  {"id": 2, "pool": "b", "worker": {"base_url": %[1]q, "model": "down-b"}},
  {"id": 3, "pool": "c", "worker": {"base_url": %[1]q, "model": "down-c"}}
]}`, srv.URL+"/v1")
	path := filepath.Join(t.TempDir(), "panel.json")
	if err := os.WriteFile(path, []byte(panel), 0o600); err != nil {
		t.Fatal(err)
	}
	b, _, _ := startServerBanner(t, "-workers", path)
	c, err := router.NewClient(b.base, router.WithAPIKey(defaultAPIKey))
	if err != nil {
		t.Fatal(err)
	}

	type reading struct {
		Status    int
		Readiness readiness
		Failures  []int // of sessions 1, 2, 3, in a row
		Health    []router.SessionHealth
	}
	read := func() reading {
		status, rd := readyz(t, b.base)
		st, err := c.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		r := reading{Status: status, Readiness: rd}
		for _, s := range st.Sessions {
			r.Failures = append(r.Failures, s.Failures)
			r.Health = append(r.Health, s.Health)
		}
		return r
	}
	healthy := []router.SessionHealth{router.HealthHealthy, router.HealthHealthy, router.HealthHealthy}
	cooling := []router.SessionHealth{router.HealthCoolingDown, router.HealthCoolingDown, router.HealthCoolingDown}
	want := []reading{
		{http.StatusOK, readiness{"ready", "ok", "3 of 3 healthy"}, []int{0, 0, 0}, healthy},
		{http.StatusOK, readiness{"ready", "ok", "3 of 3 healthy"}, []int{1, 1, 1}, healthy},
		{http.StatusOK, readiness{"ready", "ok", "3 of 3 healthy"}, []int{2, 2, 2}, healthy},
		{http.StatusServiceUnavailable, readiness{"not_ready", "ok", "0 of 3 healthy"}, []int{3, 3, 3}, cooling},
	}
	got := []reading{read()}
	for range router.DefaultFailureThreshold {
		_, err := c.ValidateV3(context.Background(), &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "tool_output", Output: json.RawMessage(`"17 * 3 = 51"`)}},
			Consensus:    router.ConsensusRequest{Replicas: 3},
		})
		var re *router.Error
		if !errors.As(err, &re) || re.Status != http.StatusBadGateway {
			t.Fatalf("a call with every model down: %v, want a 502", err)
		}
		got = append(got, read())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readiness and sessions after each failed call (-want +got):\n%s", diff)
	}
}
