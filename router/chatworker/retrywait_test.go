package chatworker_test

import (
	"errors"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router/chatworker"
)

// TestWorker_retryAfterBeyondWaitMax: a Retry-After the worker's own
// reading refuses but the retry library still honours (an HTTP date in
// UTC rather than GMT) is a pause like any other: above RetryWaitMax it
// ends the retries, and the worker does not sleep through it.
func TestWorker_retryAfterBeyondWaitMax(t *testing.T) {
	date := time.Now().Add(3*time.Second).UTC().Format("Mon, 02 Jan 2006 15:04:05") + " UTC"
	f := newFake(t, status(503, date), content(`{"verdict":"VALID","confidence":0.92,"reasons":["matches the text"]}`))
	w := newWorker(t, f, func(c *chatworker.Config) { c.RetryWaitMax = 50 * time.Millisecond })
	_, err := w.Work(t.Context(), validateJob())
	var se *chatworker.StatusError
	if !errors.As(err, &se) || se.StatusCode != 503 {
		t.Fatalf("Work error = %v, want the 503 as a *StatusError", err)
	}
	if n := len(f.reqs()); n != 1 || se.Attempts != 1 {
		t.Errorf("the server saw %d requests (the error says %d attempts) after asking for a pause of about 3s past RetryWaitMax 50ms; want 1", n, se.Attempts)
	}
}
