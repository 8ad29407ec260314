package openaihttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// PostConfig is a JSON POST to an OpenAI-compatible endpoint and how
// [Post] retries it.
type PostConfig struct {
	// Client sends each attempt.
	Client *http.Client
	// URL is the endpoint; Body the JSON sent to it.
	URL  string
	Body []byte
	// APIKey and Headers are set on the request ([SetHeaders]).
	APIKey  string
	Headers http.Header
	// WaitMin and WaitMax bound the pause between attempts; Retries is
	// the most attempts after the first.
	WaitMin, WaitMax time.Duration
	Retries          int
	// Backoff is the pause before a retry; nil is
	// retryablehttp.DefaultBackoff.
	Backoff retryablehttp.Backoff
	// Retry, if not nil, is asked before each retry the rules of [Post]
	// allow, with the answer that asked for it (nil: none came), the
	// attempts made so far and the pause; false ends the retries.
	Retry func(ctx context.Context, resp *http.Response, attempts int, pause time.Duration) bool
	// Package, Model and Host name the call in errors: "Package: Model
	// at Host: …".
	Package, Model, Host string
}

// Post sends c.Body to c.URL, retrying as retryablehttp.DefaultRetryPolicy
// allows a connection error, a 429 or a 5xx answer (other than 501),
// while the pause is at most c.WaitMax (a Retry-After asking for longer
// ends the retries), ends before ctx's deadline, and c.Retry agrees. A
// redirect httpapi.ErrRedirect refuses is never retried. It returns the
// last answer, whatever its status, and the attempts made; the caller
// closes the answer's body. When no answer came, the error says whether
// ctx cut the call short (wrapping its cause) or the request failed; it
// never holds the URL, whose query may carry a key.
func Post(ctx context.Context, c PostConfig) (*http.Response, int, error) {
	hr, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, c.URL, c.Body)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Parse's error quotes the URL, and its key
		}
		return nil, 0, fmt.Errorf("%s: building the request to %s: %w", c.Package, c.Host, err)
	}
	SetHeaders(hr.Header, c.APIKey, c.Headers)
	backoff := c.Backoff
	if backoff == nil {
		backoff = retryablehttp.DefaultBackoff
	}
	attempts := 0
	rc := &retryablehttp.Client{
		HTTPClient:   c.Client,
		RetryWaitMin: c.WaitMin,
		RetryWaitMax: c.WaitMax,
		RetryMax:     c.Retries,
		RequestLogHook: func(_ retryablehttp.Logger, _ *http.Request, i int) {
			attempts = i + 1
		},
		CheckRetry: func(ctx context.Context, resp *http.Response, err error) (bool, error) {
			if errors.Is(err, httpapi.ErrRedirect) {
				return false, err
			}
			retry, rerr := retryablehttp.DefaultRetryPolicy(ctx, resp, err)
			if !retry {
				return false, rerr
			}
			// Retry only if the pause ends in time: within WaitMax (a
			// Retry-After asks for longer) and before the deadline.
			pause := backoff(c.WaitMin, c.WaitMax, attempts-1, resp)
			if dl, ok := ctx.Deadline(); pause > c.WaitMax || ok && time.Until(dl) <= pause {
				return false, nil
			}
			return c.Retry == nil || c.Retry(ctx, resp, attempts, pause), nil
		},
		Backoff: backoff,
		ErrorHandler: func(resp *http.Response, err error, _ int) (*http.Response, error) {
			if resp != nil && !errors.Is(err, httpapi.ErrRedirect) {
				return resp, nil // the caller reads the status
			}
			if resp != nil {
				resp.Body.Close()
			}
			return nil, err
		},
	}
	resp, err := rc.Do(hr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, attempts, fmt.Errorf("%s: %s at %s: call cut short after %d attempt(s): %w", c.Package, c.Model, c.Host, attempts, context.Cause(ctx))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop the URL: it may carry a key in its query
		}
		return nil, attempts, fmt.Errorf("%s: %s at %s: sending the request after %d attempt(s): %w", c.Package, c.Model, c.Host, attempts, err)
	}
	return resp, attempts, nil
}
