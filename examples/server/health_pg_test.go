package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/vouchkit/vouch/internal/proxytest"
)

// TestRun_readyzDatabaseStopped runs the server on a PostgreSQL cluster
// of the test's own and stops that cluster's server: /readyz turns 503
// with the stores unreachable, /healthz stays 200.
func TestRun_readyzDatabaseStopped(t *testing.T) {
	databaseURL(t) // the PostgreSQL tests run, or skip, together
	c := startCluster(t)
	base, _, _ := startServer(t, "-database-url", c.dsn)
	if status, rd := readyz(t, base); status != http.StatusOK || rd.Stores != "ok" {
		t.Fatalf("/readyz with the database up = %d %+v, want 200 with the stores ok", status, rd)
	}
	c.stop(t)
	if status, rd := readyz(t, base); status != http.StatusServiceUnavailable || rd.Stores != "unreachable" || rd.Status != "not_ready" {
		t.Errorf("/readyz with the database stopped = %d %+v, want 503 with the stores unreachable", status, rd)
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz with the database stopped = %d, want 200: the process still lives", resp.StatusCode)
	}
}

func readyz(t *testing.T, base string) (int, readiness) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rd readiness
	if err := json.NewDecoder(resp.Body).Decode(&rd); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, rd
}

// TestRun_readyzDatabaseDown runs the server on PostgreSQL reached
// through a proxy, and takes the database away by stopping the proxy:
// /readyz turns 503 with the stores unreachable, /healthz stays 200.
func TestRun_readyzDatabaseDown(t *testing.T) {
	dbURL := databaseURL(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := proxytest.Start(t, u.Host)
	u.Host = proxy.Addr()
	base, _, _ := startServer(t, "-database-url", u.String(), "-database-schema", freshSchema(t, dbURL))

	if status, rd := readyz(t, base); status != http.StatusOK || rd.Stores != "ok" {
		t.Fatalf("/readyz with the database up = %d %+v, want 200 with the stores ok", status, rd)
	}
	proxy.Stop()
	if status, rd := readyz(t, base); status != http.StatusServiceUnavailable || rd.Stores != "unreachable" || rd.Status != "not_ready" {
		t.Errorf("/readyz with the database down = %d %+v, want 503 with the stores unreachable", status, rd)
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz with the database down = %d, want 200: the process still lives", resp.StatusCode)
	}
}
