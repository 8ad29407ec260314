package trust_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// trustFault is what trustFaults does to one request of its script.
type trustFault string

// trustFaults serves the n-th request with script[n] and passes every
// later one to next, counting requests. "drop" and "502-after" run next
// first, so that the service has acted when the fault strikes.
type trustFaults struct {
	next     http.Handler
	script   []trustFault
	attempts atomic.Int32
}

func (f *trustFaults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.attempts.Add(1)) - 1
	what := trustFault("pass")
	if n < len(f.script) {
		what = f.script[n]
	}
	status := func(code int) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"status":%d,"code":"injected"}`, code)
	}
	hijack := func(raw string) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		buf.WriteString(raw)
		buf.Flush()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	}
	switch what {
	case "pass":
		f.next.ServeHTTP(w, r)
	case "500":
		status(500)
	case "503":
		status(503)
	case "429":
		w.Header().Set("Retry-After", "0")
		status(429)
	case "garbage":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":`)
	case "truncated":
		w.Header().Set("Content-Length", "500")
		io.WriteString(w, `{"status":"VAL`)
	case "reset-mid-body":
		hijack("HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"status\":\"VAL")
	case "reset":
		hijack("")
	case "drop", "502-after":
		f.next.ServeHTTP(httptest.NewRecorder(), r)
		if what == "drop" {
			hijack("")
			return
		}
		status(502)
	}
}

// TestClient_Call_faults checks trust.Client against a trust service that
// fails in each way: only what is safe is retried, a call the service ran
// is replayed by its Idempotency-Key rather than run again, and each
// failure is an error errors.As or errors.Is finds.
func TestClient_Call_faults(t *testing.T) {
	trustError := func(status int) func(error) bool {
		return func(err error) bool {
			var e *trust.Error
			return errors.As(err, &e) && e.Status == status
		}
	}
	transport := func(err error) bool {
		var ne net.Error
		var ue *url.Error
		return errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) || errors.As(err, &ue)
	}
	tests := []struct {
		script    []trustFault
		wantCalls int64
		wantErr   func(error) bool
	}{
		{[]trustFault{"500"}, 0, trustError(500)},
		{[]trustFault{"503"}, 1, nil},
		{[]trustFault{"429", "429"}, 1, nil},
		{[]trustFault{"503", "503", "503"}, 0, trustError(503)},
		{[]trustFault{"garbage"}, 0, func(err error) bool { return errors.Is(err, router.ErrMalformedResponse) }},
		{[]trustFault{"truncated"}, 0, transport},
		{[]trustFault{"reset-mid-body"}, 0, transport},
		{[]trustFault{"reset"}, 1, nil},
		{[]trustFault{"drop"}, 1, nil},
		{[]trustFault{"502-after", "502-after"}, 1, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.script), func(t *testing.T) {
			caller := &fakeCaller{}
			h, err := trust.NewHandler(caller, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice"})))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(&trustFaults{next: h, script: tt.script})
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := newClient(t, srv.URL).Call(ctx, validationRequest())
			if ctx.Err() != nil {
				t.Fatalf("the call outlived its deadline: %v", err)
			}
			switch {
			case tt.wantErr == nil && (err != nil || resp.Status != trust.StatusValid):
				t.Errorf("Call = %+v, %v; want VALID", resp, err)
			case tt.wantErr != nil && (err == nil || !tt.wantErr(err)):
				t.Errorf("Call error = %v (%T), want the typed error of the fault", err, err)
			}
			if got := caller.calls.Load(); got != tt.wantCalls {
				t.Errorf("the service ran the call %d times, want %d", got, tt.wantCalls)
			}
		})
	}
}
