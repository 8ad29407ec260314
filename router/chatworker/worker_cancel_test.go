package chatworker_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router/chatworker"
)

// endAfterAnswer is a transport that sends each request, and when the
// answer is a retryable status, ends the request's context before it
// returns the answer: by cancelling it, or by waiting for its deadline.
type endAfterAnswer struct {
	cancel context.CancelFunc // nil: wait for the deadline
}

func (e endAfterAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500) {
		if e.cancel != nil {
			e.cancel()
		}
		<-r.Context().Done()
	}
	return resp, err
}

// TestWorker_Work_contextEndsAsRetryableAnswerArrives checks that when
// the job's context ends just after a 429 or a 503 arrives, before the
// retry it would have made, Work returns the context's error, as it does
// when the context ends at any other moment, not a *StatusError.
func TestWorker_Work_contextEndsAsRetryableAnswerArrives(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply fakeReply
		want  error
	}{
		{"429 cancelled", status(http.StatusTooManyRequests, ""), context.Canceled},
		{"503 deadline", status(http.StatusServiceUnavailable, ""), context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.reply)
			ctx, cancel := context.WithTimeout(t.Context(), time.Second)
			defer cancel()
			rt := endAfterAnswer{}
			if tc.want == context.Canceled {
				rt.cancel = cancel
			}
			w := newWorker(t, f, func(c *chatworker.Config) { c.HTTPClient = &http.Client{Transport: rt} })
			_, err := w.Work(ctx, validateJob())
			var se *chatworker.StatusError
			if !errors.Is(err, tc.want) || errors.As(err, &se) {
				t.Errorf("Work error = %v (%T), want one wrapping %v and no *StatusError", err, err, tc.want)
			}
			if n := len(f.reqs()); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
		})
	}
}
