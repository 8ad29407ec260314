package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/internal/openaihttp"
	"github.com/vouchkit/vouch/problem"
)

// HTTPWorker returns a [Worker] that runs each job on the remote worker at
// url (served by [NewWorkerHandler] or anything speaking the same format):
// it POSTs the job as JSON and decodes the Result.
//
// The call ends when ctx does (the engine's per-replica deadline). Errors:
// a non-2xx answer is a *[RemoteWorkerError]; a body over the limit wraps
// [ErrResponseTooLarge]; an undecodable 200, or one that gives a member
// twice (by the same name, or by names that differ in case only), wraps
// [ErrMalformedResponse]; a transport failure wraps the *url.Error (and,
// past the deadline, context.DeadlineExceeded). A redirect to another
// scheme or host is refused, a transport failure: the request carries the
// headers of [WithWorkerHeader]. The engine turns each into an ERROR vote,
// or TIMEOUT when the deadline had passed. HTTPWorker does not retry: a
// replica is one run.
//
// The worker wire format, shared with [NewWorkerHandler]:
//
//	POST <worker URL>
//	Content-Type: application/json
//
//	<a Job as JSON: kind, version, session_id, task_id, replica, tier,
//	 max_steps, timeout_ms, and the fields of its kind (a validation's
//	 claim and rules, with the task it answers in task_input, task_spec
//	 and dispute_context); see Job>
//
// A worker that ran the job answers 200 with a Result as JSON (verdict,
// confidence, reasons, output, steps, tools, model, usage; see Result).
// A worker that failed answers a non-2xx status, preferably with an RFC
// 9457 problem body; 504 when it ran out of time. The job's timeout_ms is
// the replica's budget: the sender also ends the request when its context
// does, and NewWorkerHandler applies timeout_ms to the worker's context.
// When the job's context carries a W3C trace id, the request carries it
// in a traceparent header whose parent is the replica's span, when the
// engine traces (WithEngineTelemetry).
func HTTPWorker(url string, opts ...HTTPWorkerOption) Worker {
	w := &httpWorker{url: url, shown: httpapi.ShownURL(url), hc: &http.Client{}, maxResp: DefaultMaxResponseBytes, header: http.Header{}}
	for _, o := range opts {
		o(w)
	}
	if w.maxResp <= 0 {
		w.maxResp = DefaultMaxResponseBytes
	}
	w.hc = httpapi.SameOrigin(w.hc)
	w.secrets = secretsOf(url, w.header)
	return w
}

// secretsOf lists what an error must not show of a worker's request: the
// values of its headers (and the credentials after an auth scheme, as in
// "Bearer <token>"), and the password and query of its URL.
func secretsOf(rawURL string, header http.Header) http.Header {
	secrets := http.Header{}
	for name, vals := range header {
		for _, v := range vals {
			secrets.Add(name, v)
			if _, cred, ok := strings.Cut(v, " "); ok {
				secrets.Add(name, strings.TrimSpace(cred))
			}
		}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return secrets
	}
	if p, ok := u.User.Password(); ok {
		secrets.Add("password", p)
	}
	secrets.Add("query", u.RawQuery)
	for _, vals := range u.Query() {
		secrets["query"] = append(secrets["query"], vals...)
	}
	return secrets
}

// HTTPWorkerOption configures an [HTTPWorker].
type HTTPWorkerOption func(*httpWorker)

// WithWorkerHTTPClient sets the *http.Client of the requests; nil means one
// with http.DefaultTransport. It is never modified: the worker sends
// through a copy that refuses a redirect to another origin.
func WithWorkerHTTPClient(hc *http.Client) HTTPWorkerOption {
	return func(w *httpWorker) {
		if hc != nil {
			w.hc = hc
		}
	}
}

// WithWorkerHeader adds a header to every request, such as an
// Authorization header the remote worker checks.
func WithWorkerHeader(name, value string) HTTPWorkerOption {
	return func(w *httpWorker) { w.header.Add(name, value) }
}

// WithWorkerMaxResponseBytes sets the largest result body read; zero means
// DefaultMaxResponseBytes.
func WithWorkerMaxResponseBytes(n int64) HTTPWorkerOption {
	return func(w *httpWorker) { w.maxResp = n }
}

// RemoteWorkerError is a non-2xx answer of a remote worker.
type RemoteWorkerError struct {
	// URL is the worker's URL without the password of its user info, its
	// query and its fragment, which may hold keys.
	URL string
	// StatusCode is the HTTP status.
	StatusCode int
	// Problem is the problem body, or one made from the status when the
	// body is not a problem. Its title, code and detail, which Error
	// shows, have the values of the worker's headers and the password and
	// query of its URL replaced by "[REDACTED]": a worker, or a proxy
	// before it, may echo the request.
	Problem *Error
}

// Error reports the worker, the status and the problem's detail.
func (e *RemoteWorkerError) Error() string {
	return fmt.Sprintf("router: worker %s answered %v", e.URL, e.Problem)
}

// Unwrap returns the problem, so errors.As finds the *Error.
func (e *RemoteWorkerError) Unwrap() error { return e.Problem }

type httpWorker struct {
	url     string
	shown   string // url as errors show it (httpapi.ShownURL)
	hc      *http.Client
	header  http.Header
	secrets http.Header // what errors must not show (secretsOf)
	maxResp int64
}

// Work implements [Worker].
func (w *httpWorker) Work(ctx context.Context, job *Job) (*Result, error) {
	body, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("router: encoding job for worker %s: %w", w.shown, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = w.shown // the URL does not parse: show none of it
		}
		return nil, fmt.Errorf("router: worker request: %w", err)
	}
	for k, v := range w.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, application/problem+json")
	setTraceparent(ctx, req.Header)
	resp, err := w.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = w.shown // net/http hides the password, not the query
		}
		if ctxErr := ctx.Err(); ctxErr != nil && errors.As(err, &ue) && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return nil, fmt.Errorf("router: calling worker: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, w.maxResp+1))
	if err != nil {
		return nil, fmt.Errorf("router: reading worker %s result: %w", w.shown, err)
	}
	if int64(len(data)) > w.maxResp {
		return nil, fmt.Errorf("router: worker %s result over %d bytes: %w", w.shown, w.maxResp, ErrResponseTooLarge)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// The answer may echo the request (a proxy's error page does):
		// redact the body before a detail made of it is cut, and the
		// members as decoded, which JSON escapes may have hidden.
		p := httpapi.ResponseProblem(resp, []byte(openaihttp.Redact(string(data), "", w.secrets)))
		p.Title = openaihttp.Redact(p.Title, "", w.secrets)
		p.Code = problem.Code(openaihttp.Redact(string(p.Code), "", w.secrets))
		p.Detail = openaihttp.Redact(p.Detail, "", w.secrets)
		return nil, &RemoteWorkerError{URL: w.shown, StatusCode: resp.StatusCode, Problem: p}
	}
	var res Result
	if err := json.Unmarshal(data, &res); err != nil {
		return nil, fmt.Errorf("router: decoding worker %s result: %w: %w", w.shown, ErrMalformedResponse, err)
	}
	if err := httpapi.CheckAnswer(data, &res); err != nil { // a member given twice would vote with the last
		return nil, fmt.Errorf("router: decoding worker %s result: %w: %v", w.shown, ErrMalformedResponse, err)
	}
	return &res, nil
}

// WorkerHandlerOption configures the handler of [NewWorkerHandler].
type WorkerHandlerOption func(*workerHandler)

// WithWorkerLogger sets the logger of worker failures and panics; nil
// means silent.
func WithWorkerLogger(l *slog.Logger) WorkerHandlerOption {
	return func(h *workerHandler) {
		if l != nil {
			h.log = l
		}
	}
}

// NewWorkerHandler returns an http.Handler that serves w in the worker wire
// format (see [HTTPWorker]) on any path: it accepts POST with a JSON Job
// of at most 1 MiB, runs w under the request's context bounded by the
// job's timeout_ms, and answers 200 with the Result. A worker error is
// answered 502 with its message as the problem's detail (the worker is
// the host's own), an *Error with its own status, a deadline 504, a panic
// 500. It does no authentication: wrap it with the host's own.
func NewWorkerHandler(w Worker, opts ...WorkerHandlerOption) http.Handler {
	h := &workerHandler{w: w, log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(h)
	}
	return h
}

type workerHandler struct {
	w   Worker
	log *slog.Logger
}

func (h *workerHandler) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.log.ErrorContext(r.Context(), "router: worker panicked", "panic", fmt.Sprint(v))
			problem.Write(rw, problem.New(http.StatusInternalServerError, problem.CodeInternal, "the worker panicked"))
		}
	}()
	if r.Method != http.MethodPost {
		rw.Header().Set("Allow", http.MethodPost)
		problem.Write(rw, problem.Newf(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed, "use POST, not %s", r.Method))
		return
	}
	if !httpapi.IsJSON(r.Header.Get("Content-Type")) {
		problem.Write(rw, problem.New(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMediaType, "Content-Type must be application/json"))
		return
	}
	var job Job
	if err := jsonbody.Decode(r.Body, jsonbody.DefaultLimit, &job); err != nil {
		problem.Write(rw, err.(*Error))
		return
	}
	ctx := r.Context()
	if job.TimeoutMS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(job.TimeoutMS)*time.Millisecond)
		defer cancel()
	}
	res, err := h.w.Work(ctx, &job)
	var p *Error
	switch {
	case err == nil && res == nil:
		problem.Write(rw, problem.New(http.StatusBadGateway, problem.CodeInternal, "the worker returned no result"))
	case err == nil:
		body, err := json.Marshal(res)
		if err != nil {
			problem.Write(rw, problem.Newf(http.StatusBadGateway, problem.CodeInternal, "encoding the result: %v", err))
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.Write(append(body, '\n'))
	case errors.As(err, &p) && p.Status >= 400 && p.Status <= 599:
		problem.Write(rw, p)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		problem.Write(rw, problem.Newf(http.StatusGatewayTimeout, problem.CodeTimeout, "the worker ran out of time: %v", err))
	default:
		h.log.ErrorContext(ctx, "router: worker failed", "task_id", job.TaskID, "error", err)
		problem.Write(rw, problem.New(http.StatusBadGateway, problem.CodeInternal, err.Error()))
	}
}
