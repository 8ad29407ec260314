package openaihttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// server answers each call with the next of statuses (the last repeats),
// counting the calls.
func server(t *testing.T, retryAfter string, statuses ...int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if string(body) != `{"in":1}` || r.Header.Get("Authorization") != "Bearer sk-test" || r.Header.Get("X-Extra") != "on" {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		n := int(calls.Add(1))
		status := statuses[min(n, len(statuses))-1]
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"n":%d}`, n)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func config(url string) PostConfig {
	return PostConfig{
		Client: &http.Client{}, URL: url, Body: []byte(`{"in":1}`),
		APIKey: "sk-test", Headers: http.Header{"X-Extra": {"on"}},
		WaitMin: time.Millisecond, WaitMax: 10 * time.Millisecond, Retries: 3,
		Package: "pkg", Model: "m", Host: "h",
	}
}

// Post retries a 503 while the rules allow, and returns the last answer
// whatever its status, with the attempts made.
func TestPostAnswers(t *testing.T) {
	for _, tt := range []struct {
		name       string
		retryAfter string
		statuses   []int
		waitMax    time.Duration
		timeout    time.Duration // 0: none
		retry      bool          // what the Retry hook says
		ruled      bool          // the rules end the retries before the hook is asked
		want       int           // status; attempts and calls are the same count
		attempts   int
	}{
		{"a 503 then an answer", "", []int{503, 200}, 10 * time.Millisecond, 0, true, false, 200, 2},
		{"503 until the retries run out", "", []int{503}, 10 * time.Millisecond, 0, true, false, 503, 4},
		{"the Retry hook ends the retries", "", []int{503, 200}, 10 * time.Millisecond, 0, false, false, 503, 1},
		// A pause that would end after the deadline is not waited: the
		// answer that asked for it is returned at once.
		{"the pause would pass the deadline", "1", []int{503, 200}, 2 * time.Second, 500 * time.Millisecond, true, true, 503, 1},
		// A Retry-After longer than WaitMax ends the retries, whatever
		// form the backoff read it in.
		{"a Retry-After above WaitMax", "1", []int{503, 200}, 10 * time.Millisecond, 0, true, true, 503, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := server(t, tt.retryAfter, tt.statuses...)
			cfg := config(srv.URL)
			cfg.WaitMax = tt.waitMax
			var asked []int
			cfg.Retry = func(_ context.Context, resp *http.Response, attempts int, pause time.Duration) bool {
				asked = append(asked, attempts, resp.StatusCode)
				if pause > cfg.WaitMax {
					t.Errorf("pause %v, above WaitMax %v", pause, cfg.WaitMax)
				}
				return tt.retry
			}
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			resp, attempts, err := Post(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if tt.timeout > 0 && time.Since(start) > tt.timeout*4/5 {
				t.Errorf("took %v: it waited for the pause", time.Since(start))
			}
			body, _ := io.ReadAll(resp.Body)
			wantBody := fmt.Sprintf(`{"n":%d}`, tt.attempts)
			if resp.StatusCode != tt.want || string(body) != wantBody || attempts != tt.attempts || int(calls.Load()) != tt.attempts {
				t.Errorf("status %d, body %s, %d attempts, %d calls; want %d, %s, %d and %d",
					resp.StatusCode, body, attempts, calls.Load(), tt.want, wantBody, tt.attempts, tt.attempts)
			}
			if !tt.ruled && (len(asked) < 2 || asked[0] != 1 || asked[1] != 503) {
				t.Errorf("Retry asked with (attempts, status) %v, want 1 and 503 first", asked)
			}
			if tt.ruled && len(asked) > 0 {
				t.Errorf("Retry asked with %v where the rules end the retries", asked)
			}
		})
	}
}

// A refused redirect is an error, never retried, and its text holds no
// URL (one may carry a key in its query).
func TestPostNeverRetriesARefusedRedirect(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Redirect(w, r, "http://elsewhere.invalid/v1", http.StatusFound)
	}))
	defer srv.Close()
	cfg := config(srv.URL + "/v1?key=sk-query")
	cfg.Client = httpapi.SameOrigin(&http.Client{})
	resp, attempts, err := Post(context.Background(), cfg)
	if resp != nil {
		resp.Body.Close()
	}
	if !errors.Is(err, httpapi.ErrRedirect) || attempts != 1 || calls.Load() != 1 {
		t.Fatalf("error %v, %d attempts, %d calls; want ErrRedirect, 1 and 1", err, attempts, calls.Load())
	}
	want := "pkg: m at h: sending the request after 1 attempt(s): redirect to another origin refused: http://elsewhere.invalid"
	if err.Error() != want || strings.Contains(err.Error(), "sk-query") {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestPostCutShort(t *testing.T) {
	srv, _ := server(t, "", http.StatusServiceUnavailable)
	cfg := config(srv.URL)
	cfg.WaitMin, cfg.WaitMax = time.Second, time.Second
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("the job was withdrawn")
	cfg.Retry = func(context.Context, *http.Response, int, time.Duration) bool {
		cancel(cause)
		return true
	}
	_, attempts, err := Post(ctx, cfg)
	want := "pkg: m at h: call cut short after 1 attempt(s): the job was withdrawn"
	if !errors.Is(err, cause) || attempts != 1 || err.Error() != want {
		t.Errorf("error %q, %d attempts; want %q and 1", err, attempts, want)
	}
}

// TestPostBadURL: a URL that does not parse is an error naming the host
// and the fault, never the URL, whose query may carry a key (?key=…, as
// some OpenAI-compatible endpoints take it); no attempt is made.
func TestPostBadURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://[::1", "pkg: building the request to h: missing ']' in host"},
		{"https://api.example:44x/v1/chat/completions?key=sk-query-secret", `pkg: building the request to h: invalid port ":44x" after host`},
	} {
		_, attempts, err := Post(context.Background(), config(tc.url))
		if err == nil || attempts != 0 || err.Error() != tc.want {
			t.Errorf("%s: error %v, %d attempts; want %q and 0", tc.url, err, attempts, tc.want)
		}
	}
}
