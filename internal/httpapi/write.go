package httpapi

import (
	"net/http"
	"strconv"

	"github.com/vouchkit/vouch/problem"
)

// Writing responses and problems.

// WriteProblem answers r with p, filling in the request id the Server gave
// r and, when p has none, the request path as instance and the status
// text as title.
func WriteProblem(w http.ResponseWriter, r *http.Request, p *problem.Details) {
	writeStored(w, problemResponse(r, p))
}

// problemResponse encodes p for r, with the request id and path filled in.
func problemResponse(r *http.Request, p *problem.Details) *StoredResponse {
	q := *p
	q.RequestID = infoFrom(r.Context()).id
	if q.Instance == "" {
		q.Instance = r.URL.Path
	}
	if q.Title == "" {
		q.Title = http.StatusText(q.Status)
	}
	return &StoredResponse{Status: q.Status, ContentType: problem.ContentType, Body: problem.Encode(&q)}
}

func writeStored(w http.ResponseWriter, s *StoredResponse) {
	h := w.Header()
	h.Set("Content-Type", s.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(s.Body)))
	w.WriteHeader(s.Status)
	w.Write(s.Body)
}
