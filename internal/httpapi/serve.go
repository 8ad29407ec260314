package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/problem"
)

// Serving an admitted request: read its body, prepare its call, run it.

// serve reads, decodes and validates the request, then runs it, once per
// idempotency key.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, prepare func(*http.Request, []byte) (Run, error), hasBody bool) {
	if !CheckNoQuery(w, r) {
		return
	}
	var body []byte
	if hasBody {
		if !CheckJSONBody(w, r) {
			return
		}
		var p *problem.Details
		if body, p = s.readBody(r); p != nil {
			WriteProblem(w, r, p)
			return
		}
	}
	run, err := prepare(r, body)
	if err != nil {
		WriteProblem(w, r, s.toProblem(r, err))
		return
	}
	if !hasBody {
		writeStored(w, s.execute(r, run))
		return
	}
	key, p := IdempotencyKey(r.Header)
	if p != nil {
		WriteProblem(w, r, p)
		return
	}
	if key == "" || infoFrom(r.Context()).unknownPayer {
		writeStored(w, s.execute(r, run)) // no one else could ask for its answer
		return
	}
	s.serveIdempotent(w, r, key, body, run)
}

// readBody reads the body up to the limit; the problem is a 413 or a 400.
func (s *Server) readBody(r *http.Request) ([]byte, *problem.Details) {
	limit := s.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		return nil, problem.Newf(http.StatusRequestEntityTooLarge, problem.CodeBodyTooLarge, "body is larger than %d bytes", limit)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, problem.Newf(http.StatusBadRequest, problem.CodeMalformedJSON, "reading body: %v", err)
	}
	if int64(len(body)) > limit {
		return nil, problem.Newf(http.StatusRequestEntityTooLarge, problem.CodeBodyTooLarge, "body is larger than %d bytes", limit)
	}
	return body, nil
}

// CheckJSONBody answers r with a problem when its body is not JSON as
// sent, and reports whether the body may be read: a Content-Type or
// Content-Encoding header sent twice is a 400, a Content-Type other than
// JSON (see [IsJSON]) a 415 with Accept-Post, and a content coding other
// than identity (gzip, which would be refused as invalid UTF-8, or read
// as if it were not coded) a 415 with Accept-Encoding: identity.
func CheckJSONBody(w http.ResponseWriter, r *http.Request) bool {
	ct, p := OneHeader(r.Header, "Content-Type")
	if p != nil {
		WriteProblem(w, r, p)
		return false
	}
	if !IsJSON(ct) {
		w.Header().Set("Accept-Post", "application/json")
		WriteProblem(w, r, problem.Newf(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMediaType,
			"Content-Type must be application/json (in UTF-8), got %q", ct))
		return false
	}
	ce, p := OneHeader(r.Header, "Content-Encoding")
	if p != nil {
		WriteProblem(w, r, p)
		return false
	}
	if ce != "" && !strings.EqualFold(strings.TrimSpace(ce), "identity") {
		w.Header().Set("Accept-Encoding", "identity")
		WriteProblem(w, r, problem.Newf(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMediaType,
			"Content-Encoding %q is not supported: send the body without a content coding", ce))
		return false
	}
	return true
}

// IsJSON reports whether a Content-Type names JSON: application/json or an
// application/...+json type, with no charset or charset=utf-8 (JSON
// between systems is UTF-8, RFC 8259; a body declared in another charset
// would be read otherwise than it was written).
func IsJSON(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return false
	}
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// execute runs the call and encodes its answer (see marshal: a trust
// answer's inline receipt is its bytes as issued).
func (s *Server) execute(r *http.Request, run Run) *StoredResponse {
	resp, err := run(r.Context())
	if err == nil && resp == nil {
		err = errNilResponse
	}
	if err != nil {
		return problemResponse(r, s.toProblem(r, err), "")
	}
	body, err := marshal(resp)
	if err != nil {
		return problemResponse(r, s.toProblem(r, fmt.Errorf("%s: encoding response: %w", s.cfg.Name, err)), "")
	}
	return &StoredResponse{Status: http.StatusOK, ContentType: "application/json", Body: append(body, '\n')}
}

// errNilResponse reports a Run that returned neither an answer nor an
// error.
var errNilResponse = errors.New("the call returned a nil response and a nil error")

// toProblem maps an error to the problem the client sees: a
// *problem.Details as it is, a deadline as 504, a cancelled request as
// 503, anything else as a bare 500.
func (s *Server) toProblem(r *http.Request, err error) *problem.Details {
	var p *problem.Details
	switch {
	case errors.As(err, &p):
		if p.Status < 400 || p.Status > 599 {
			s.log.ErrorContext(r.Context(), s.cfg.Name+": error with an invalid status", "error", err)
			return problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal error")
		}
		return p
	case errors.Is(err, context.DeadlineExceeded):
		return problem.New(http.StatusGatewayTimeout, problem.CodeTimeout, "the call did not finish in time")
	case r.Context().Err() != nil:
		return problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "the request was cancelled")
	default:
		s.log.ErrorContext(r.Context(), s.cfg.Name+": call failed", "request_id", infoFrom(r.Context()).id, "error", err)
		return problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal error")
	}
}

// CheckNoQuery answers r with a 400 problem when its URL has a query, and
// reports whether r may be served: a route that takes no parameters
// names each one, rule "unknown", and a query it cannot read "(query)",
// rule "malformed", as the Server's endpoints do, rather than answer as
// if the query were not there.
func CheckNoQuery(w http.ResponseWriter, r *http.Request) bool {
	if errs := queryParameters(r); len(errs) > 0 {
		WriteProblem(w, r, problem.Invalid(errs))
		return false
	}
	return true
}

// queryParameters returns a field error, rule "unknown", for each query
// parameter of r, in the order of their names, and one naming "(query)",
// rule "malformed", when the query holds a pair it cannot read (a ";",
// a bad escape): an endpoint that prepares its call reads its body
// alone, and a parameter it took as absent (?replicas=5, or ?replicas=5;
// which r.URL.Query drops) would be a silent default.
func queryParameters(r *http.Request) []problem.FieldError {
	var errs []problem.FieldError
	q, err := url.ParseQuery(r.URL.RawQuery)
	for _, name := range slices.Sorted(maps.Keys(q)) {
		errs = append(errs, problem.FieldError{Field: name, Rule: "unknown",
			Message: "is not a parameter of this endpoint, which takes none"})
	}
	if err != nil {
		errs = append(errs, problem.FieldError{Field: "(query)", Rule: "malformed",
			Message: `is not name=value pairs joined by "&", each escaped as a URL's query is`})
	}
	return errs
}
