package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
)

// dbProxy forwards TCP connections to a database until it is stopped;
// stopping it closes the listener and every connection, which is, to
// the server behind it, the database going away.
type dbProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func startDBProxy(t *testing.T, target string) *dbProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &dbProxy{ln: ln, target: target}
	p.wg.Go(p.accept)
	t.Cleanup(p.stop)
	return p
}

func (p *dbProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		d, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, d)
		p.mu.Unlock()
		p.wg.Go(func() { _, _ = io.Copy(d, c); d.Close() })
		p.wg.Go(func() { _, _ = io.Copy(c, d); c.Close() })
	}
}

// stop closes the listener and every connection, and waits for the
// copies to end.
func (p *dbProxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

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
	proxy := startDBProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	base, _, _ := startServer(t, "-database-url", u.String(), "-database-schema", freshSchema(t, dbURL))

	if status, rd := readyz(t, base); status != http.StatusOK || rd.Stores != "ok" {
		t.Fatalf("/readyz with the database up = %d %+v, want 200 with the stores ok", status, rd)
	}
	proxy.stop()
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
