package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/x402"
)

// TestServerTimeouts: the API server's read, write and idle timeouts
// follow from the longest time budget of a route: the write timeout
// outlasts it, the read and idle timeouts are set.
func TestServerTimeouts(t *testing.T) {
	t.Parallel()
	longest := max(router.DefaultCallTimeout, x402.DefaultTimeBudget)
	srv := apiServer(nil, nil, timeoutsFor(longest))
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 {
		t.Errorf("read header %v, read %v, idle %v: want all set", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout)
	}
	if srv.WriteTimeout <= longest {
		t.Errorf("write timeout %v, want longer than the longest time budget %v", srv.WriteTimeout, longest)
	}
}

// TestServerTimeouts_bodyNeverArrives: a POST announcing 200 bytes and
// sending 10 is closed once the read timeout passes, not held open.
func TestServerTimeouts_bodyNeverArrives(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := apiServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}), log.New(io.Discard, "", 0), serverTimeouts{readHeader: 50 * time.Millisecond, read: 100 * time.Millisecond, write: time.Second, idle: time.Second})
	go srv.Serve(ln)
	defer srv.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n0123456789"); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(time.Minute)) // a guard against a hang, not a measure
	if _, err := io.ReadAll(conn); err != nil {
		t.Errorf("the connection was not closed by the server: %v", err)
	}
}
