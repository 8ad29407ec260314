package httpapi

import (
	"cmp"
	"net/http"
	"strconv"

	"github.com/vouchkit/vouch/problem"
)

// Writing responses and problems.

// WriteProblem answers r with p, filling in the request id the Server gave
// r (outside a Server, the id already set on w's X-Request-Id header, as
// [WithRequestID] sets it) and, when p has none, the request path as
// instance and the status text as title.
func WriteProblem(w http.ResponseWriter, r *http.Request, p *problem.Details) {
	writeStored(w, problemResponse(r, p, w.Header().Get(HeaderRequestID)))
}

// problemResponse encodes p for r, with the path filled in and the request
// id the Server gave r, or else id.
func problemResponse(r *http.Request, p *problem.Details, id string) *StoredResponse {
	q := *p
	q.RequestID = cmp.Or(infoFrom(r.Context()).id, id)
	if q.Instance == "" {
		q.Instance = r.URL.Path
	}
	if q.Title == "" {
		q.Title = http.StatusText(q.Status)
	}
	return &StoredResponse{Status: q.Status, ContentType: problem.ContentType, Body: problem.Encode(&q)}
}

// WithRequestID serves next with a request id on every response, as a
// [Server] names each of its requests: a new id in the X-Request-Id
// header, unless one is set already, which [WriteProblem] repeats as the
// problem's request_id. Mount a handler beside a Server's endpoints (an
// MCP or A2A endpoint) behind it, so that its answers, refusals included,
// carry an id as theirs do.
func WithRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if w.Header().Get(HeaderRequestID) == "" {
			w.Header().Set(HeaderRequestID, newRequestID())
		}
		next.ServeHTTP(w, r)
	})
}

func writeStored(w http.ResponseWriter, s *StoredResponse) {
	h := w.Header()
	h.Set("Content-Type", s.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(s.Body)))
	w.WriteHeader(s.Status)
	w.Write(s.Body)
}
