package x402

import (
	"errors"
	"net/http"
	"slices"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/problem"
)

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
		q.RequestID = w.Header().Get(httpapi.HeaderRequestID)
	}
	problem.Write(w, &q)
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
