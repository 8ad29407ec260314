package x402

import (
	"errors"
	"net/http"
	"slices"

	"github.com/vouchkit/vouch/problem"
)

// headerRequestID is the response header in which a server that names
// its requests (the router and trust handlers) has put the request's id.
const headerRequestID = "X-Request-Id"

// writeProblem answers r with p, with the request path as its instance
// and, when the server named the request on the response's X-Request-Id,
// that id as its request_id, as the problems of the handlers the
// middleware guards carry them.
func writeProblem(w http.ResponseWriter, r *http.Request, p *problem.Details) {
	q := *p
	if q.Instance == "" {
		q.Instance = r.URL.Path
	}
	if q.RequestID == "" {
		q.RequestID = w.Header().Get(headerRequestID)
	}
	problem.Write(w, &q)
}

// idempotencyKeyProblem returns the 400 problem of a request whose
// Idempotency-Key is sent empty or more than once, and nil otherwise. A
// proof is bound to its request's key (a repeat gets the answer it bought
// only with the same key), and such a header names no one key, so it is
// refused before the payment is looked at rather than read as no key, or
// as its first copy. The form of a key is the handler's to check.
func idempotencyKeyProblem(h http.Header) *problem.Details {
	vals := h[HeaderIdempotencyKey]
	switch {
	case len(vals) > 1:
		return problem.Newf(http.StatusBadRequest, problem.CodeInvalidRequest,
			"Idempotency-Key is sent %d times; send one key", len(vals))
	case len(vals) == 1 && vals[0] == "":
		return problem.New(http.StatusBadRequest, problem.CodeInvalidRequest,
			"Idempotency-Key is empty; send a key, or no Idempotency-Key header")
	}
	return nil
}

// headerProblem returns the 400 problem of err, the error of decoding the
// payment header name: its detail starts with the header's name, and its
// field errors name the header when the value as a whole is at fault
// (rule "encoding": not base64 of a JSON object), or the JSON path of
// each invalid member inside the value.
func headerProblem(name string, err error) *problem.Details {
	var d *problem.Details
	if !errors.As(err, &d) {
		d = problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, err.Error())
	}
	q := *d
	q.Detail = name + " header: " + d.Detail
	if len(d.Errors) == 0 {
		q.Errors = []problem.FieldError{{Field: name, Rule: "encoding", Message: d.Detail}}
		return &q
	}
	q.Errors = slices.Clone(d.Errors)
	for i, e := range q.Errors {
		if e.Field == "" || e.Field == "(body)" { // the value itself
			q.Errors[i].Field = name
		}
	}
	return &q
}
