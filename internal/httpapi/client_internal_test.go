package httpapi

import (
	"net/http"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	for attempt := range 40 {
		d := backoff(100*time.Millisecond, 2*time.Second, attempt, nil)
		limit := min(2*time.Second, 100*time.Millisecond<<min(attempt, 20))
		if d < limit/2 || d > limit {
			t.Errorf("attempt %d: %s, want within [%s, %s]", attempt, d, limit/2, limit)
		}
	}
	resp := &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"7"}}}
	if d := backoff(time.Millisecond, time.Second, 0, resp); d != 7*time.Second {
		t.Errorf("with Retry-After 7: %s, want 7s", d)
	}
	resp.Header.Set("Retry-After", "soon")
	if _, ok := retryAfter(resp); ok {
		t.Error("Retry-After \"soon\" parsed")
	}
}

// FuzzResponseProblem decodes arbitrary error bodies as the Client does:
// the result always carries the response's status and never panics.
func FuzzResponseProblem(f *testing.F) {
	f.Add(502, []byte(`{"type":"urn:vouch:problem:internal","title":"Bad Gateway","status":502,"code":"internal"}`))
	f.Add(429, []byte(`rate limited`))
	f.Add(400, []byte(`{"status":"400","errors":[{"field":1}]}`))
	f.Add(404, []byte(``))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			status = 500
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{HeaderRequestID: {"req_1"}}}
		p := ResponseProblem(resp, body)
		if p.Status != status || p.RequestID == "" || p.Title == "" && http.StatusText(status) != "" {
			t.Fatalf("problem %+v for status %d body %q", p, status, body)
		}
		_ = p.Error()
	})
}
