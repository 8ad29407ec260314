package router_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// fault is what a faultInjector does to one request. Faults that name no
// run answer without reaching the wrapped handler; the others run it
// first, so that the server has acted when the fault strikes.
type fault int

const (
	pass               fault = iota // serve the request as it is
	status500                       // 500 problem, handler not run
	status502                       // 502 HTML page, handler not run
	status503                       // 503 problem, handler not run
	status504                       // 504 problem, handler not run
	status429                       // 429 with Retry-After: 0, handler not run
	status429Long                   // 429 with Retry-After: 3600, handler not run
	status400                       // 400 problem, handler not run
	garbage                         // 200 with a body that is not JSON, handler not run
	truncated                       // 200 whose body stops before its Content-Length, handler not run
	resetMidBody                    // 200 head and part of the body, then a TCP reset, handler not run
	resetEarly                      // a TCP reset before any answer, handler not run
	dropAfterRun                    // the handler runs, then a TCP reset instead of its answer
	badGatewayAfterRun              // the handler runs, then a 502 instead of its answer
)

// faultInjector serves the n-th request with script[n], and every request
// after the script with pass. It counts the requests.
type faultInjector struct {
	next     http.Handler
	mu       sync.Mutex
	script   []fault
	attempts atomic.Int32
}

func (f *faultInjector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(f.attempts.Add(1)) - 1
	f.mu.Lock()
	what := pass
	if n < len(f.script) {
		what = f.script[n]
	}
	f.mu.Unlock()
	problem := func(status int) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"title":%q,"status":%d,"code":"injected"}`, http.StatusText(status), status)
	}
	switch what {
	case pass:
		f.next.ServeHTTP(w, r)
	case status500:
		problem(http.StatusInternalServerError)
	case status502:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
	case status503:
		problem(http.StatusServiceUnavailable)
	case status504:
		problem(http.StatusGatewayTimeout)
	case status429:
		w.Header().Set("Retry-After", "0")
		problem(http.StatusTooManyRequests)
	case status429Long:
		w.Header().Set("Retry-After", "3600")
		problem(http.StatusTooManyRequests)
	case status400:
		problem(http.StatusBadRequest)
	case garbage:
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "<html>not json</html>")
	case truncated:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "1000")
		io.WriteString(w, `{"verdict":"VAL`)
	case resetMidBody:
		reset(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"verdict\":\"VAL")
	case resetEarly:
		reset(w, "")
	case dropAfterRun, badGatewayAfterRun:
		rec := httptest.NewRecorder()
		f.next.ServeHTTP(rec, r)
		if what == dropAfterRun {
			reset(w, "")
			return
		}
		problem(http.StatusBadGateway)
	}
}

// reset writes raw to the connection under w, then closes it with a TCP
// reset (SO_LINGER 0), as a crashed proxy does.
func reset(w http.ResponseWriter, raw string) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	if raw != "" {
		buf.WriteString(raw)
		buf.Flush()
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// faultyRouter serves an engine on one honest session behind a fault
// injector on loopback, and returns the injector, the session's recorder
// and a Client that retries twice with short waits.
func faultyRouter(t *testing.T, script ...fault) (*faultInjector, *routertest.Recorder, *router.Client) {
	t.Helper()
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 1, rec)),
		router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	fi := &faultInjector{next: h, script: script}
	srv := httptest.NewServer(fi)
	t.Cleanup(srv.Close)
	c, err := router.NewClient(srv.URL, router.WithAPIKey("k"),
		router.WithRetry(router.RetryPolicy{Max: 2, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	return fi, rec, c
}

// TestClient_faults checks, for each fault of a router, how many times the
// Client sends the call (only connection errors before an answer, 429,
// 502, 503 and 504 are retried), how many times the worker runs (at most
// once), and that the failure reaches the caller as an error errors.As or
// errors.Is finds.
func TestClient_faults(t *testing.T) {
	routerError := func(status int) func(error) bool {
		return func(err error) bool {
			var p *router.Error
			return errors.As(err, &p) && p.Status == status
		}
	}
	transportError := func(err error) bool {
		var ne net.Error
		var ue *url.Error
		return errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne) || errors.As(err, &ue)
	}
	tests := []struct {
		name         string
		script       []fault
		wantAttempts int32
		wantRuns     int64
		wantErr      func(error) bool // nil: the call succeeds
	}{
		{"500 is not retried", []fault{status500}, 1, 0, routerError(500)},
		{"400 is not retried", []fault{status400}, 1, 0, routerError(400)},
		{"502 HTML, retries exhausted", []fault{status502, status502, status502}, 3, 0, routerError(502)},
		{"503 then success", []fault{status503}, 2, 1, nil},
		{"504 then success", []fault{status504}, 2, 1, nil},
		{"429 Retry-After 0 then success", []fault{status429, status429}, 3, 1, nil},
		{"429 Retry-After too long", []fault{status429Long}, 1, 0, routerError(429)},
		{"garbage 200 is not retried", []fault{garbage}, 1, 0, func(err error) bool { return errors.Is(err, router.ErrMalformedResponse) }},
		{"truncated body is not retried", []fault{truncated}, 1, 0, transportError},
		{"reset mid-body is not retried", []fault{resetMidBody}, 1, 0, transportError},
		{"reset before any answer is retried", []fault{resetEarly}, 2, 1, nil},
		{"resets exhaust the retries", []fault{resetEarly, resetEarly, resetEarly}, 3, 0, transportError},
		{"answer lost after the run: replayed, not rerun", []fault{dropAfterRun}, 2, 1, nil},
		{"502 after the run: replayed, not rerun", []fault{badGatewayAfterRun, badGatewayAfterRun}, 3, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fi, rec, c := faultyRouter(t, tt.script...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			got, err := c.ValidateV2(ctx, validateV2(1))
			if ctx.Err() != nil {
				t.Fatalf("the call outlived its deadline: %v", err)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("ValidateV2: %v, want success", err)
			case tt.wantErr == nil && got.Verdict != router.VerdictValid:
				t.Errorf("verdict %s, want VALID", got.Verdict)
			case tt.wantErr != nil && (err == nil || !tt.wantErr(err)):
				t.Errorf("ValidateV2 error = %v (%T), want the typed error of the fault", err, err)
			}
			// Go's transport may itself resend a request with an
			// Idempotency-Key over a fresh connection; either way the
			// worker runs at most once.
			if got := fi.attempts.Load(); got < tt.wantAttempts || got > tt.wantAttempts+1 ||
				got != tt.wantAttempts && tt.script[0] != resetEarly && tt.script[0] != dropAfterRun {
				t.Errorf("%d attempts reached the server, want %d", got, tt.wantAttempts)
			}
			if got := rec.Calls.Load(); got != tt.wantRuns {
				t.Errorf("the worker ran %d times, want %d", got, tt.wantRuns)
			}
		})
	}
}

// TestClient_retryAfterLostAnswerConcurrent sends many calls at once
// through a router that loses the first answer of every call after
// running it: each call succeeds, and the worker runs exactly once per
// call.
func TestClient_retryAfterLostAnswerConcurrent(t *testing.T) {
	const calls = 40
	script := make([]fault, 0, calls)
	for range calls {
		script = append(script, dropAfterRun)
	}
	fi, rec, c := faultyRouter(t, script...)
	var wg sync.WaitGroup
	errs := make([]error, calls)
	for i := range calls {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			req := validateV2(1)
			req.RequestID = fmt.Sprintf("call-%d", i)
			_, errs[i] = c.ValidateV2(ctx, req)
		})
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
			var ue *url.Error
			if !errors.As(err, &ue) {
				t.Errorf("failure %v is not a transport error", err)
			}
		}
	}
	// A call whose every attempt was dropped after running fails; it still
	// ran once. The others succeed.
	if got := rec.Calls.Load(); got != calls {
		t.Errorf("the worker ran %d times for %d calls (%d failed, %d attempts), want exactly once per call",
			got, calls, failed, fi.attempts.Load())
	}
}

// TestClient_failedRunsNotRerun: a 502 all_replicas_failed or a 504
// timeout that the router answers itself reports replicas that ran, and
// spent what they spent; the Client returns it at once, with its
// evidence, rather than run the workers again under the same key.
func TestClient_failedRunsNotRerun(t *testing.T) {
	tests := []struct {
		name      string
		worker    router.Worker
		timeoutMS int64 // the call's policy.timeout_ms: 1 times the hanging worker out
		status    int
		code      router.Code
	}{
		{"all failed", routertest.Fixed(router.Result{Verdict: "BOGUS"}), 60_000, http.StatusBadGateway, "all_replicas_failed"},
		{"timed out", routertest.Hang(), 1, http.StatusGatewayTimeout, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := routertest.NewRecorder(tt.worker)
			h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 1, rec)),
				router.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "tests"})))
			if err != nil {
				t.Fatal(err)
			}
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				h.ServeHTTP(w, r)
			}))
			defer srv.Close()
			req := validateV3(1, "")
			req.Policy.TimeoutMS = tt.timeoutMS
			_, err = newTestClient(t, srv.URL).ValidateV3(t.Context(), req)
			p := asError(t, err, tt.status, tt.code)
			if len(p.Extra) == 0 {
				t.Error("the problem carries no evidence")
			}
			if n, runs := requests.Load(), rec.Calls.Load(); n != 1 || runs != 1 {
				t.Errorf("%d requests reached the server and the worker ran %d times, want 1 and 1", n, runs)
			}
		})
	}
}
