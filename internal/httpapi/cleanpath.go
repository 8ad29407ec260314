package httpapi

import (
	"net/http"
	"path"
	"strings"

	"github.com/vouchkit/vouch/problem"
)

// Paths that are not clean.

// cleanPath returns the clean form of p, as http.ServeMux cleans a path
// before it matches it: one slash at the start, no doubled slash, no "."
// or ".." segment, and the trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// uncleanPath returns the 404 problem of r when its path is not clean,
// naming the clean path, and nil otherwise. http.ServeMux answers such a
// path with a redirect to its clean form, which a client that does not
// follow redirects (curl without -L) takes as an empty answer: a POST to
// //api/v4/trust silently did nothing.
func uncleanPath(r *http.Request) *problem.Details {
	if r.Method == http.MethodConnect {
		return nil
	}
	clean := cleanPath(r.URL.Path)
	if clean == r.URL.Path {
		return nil
	}
	return problem.Newf(http.StatusNotFound, problem.CodeNotFound,
		"no route %s: the path has %s; did you mean %s?", r.URL.Path, unclean(r.URL.Path), clean)
}

// emptySegment reports whether p has a doubled slash between two
// segments, not only at its start or end.
func emptySegment(p string) bool {
	return strings.Contains(strings.Trim(p, "/"), "//")
}

// unclean says what makes p, a path that is not clean, so. A doubled
// slash between two segments may be a value left empty, such as the
// receipt id of /api/v4/receipt//proof (an unset shell variable), whose
// clean form names another route: the answer asks.
func unclean(p string) string {
	switch {
	case emptySegment(p):
		return "a doubled slash (was a value between two slashes, such as an id, left empty?)"
	case strings.Contains(p, "//"):
		return "a doubled slash"
	case p == "" || p[0] != '/':
		return "no slash at the start"
	}
	return `a "." or ".." segment`
}

// RefuseUncleanPaths serves next with every request whose path is clean
// (one slash at the start, no doubled slash, no "." or ".." segment) and
// answers the others 404 with a problem that names the clean path ("did
// you mean /api/v4/trust?"), as a [Server] does, where an http.ServeMux
// would redirect them: a client that does not follow redirects would see
// an empty answer. The answer carries an X-Request-Id, repeated as the
// problem's request_id. Mount a ServeMux that holds a Server beside
// other handlers (MCP, A2A) behind it.
func RefuseUncleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := uncleanPath(r)
		if p == nil {
			next.ServeHTTP(w, r)
			return
		}
		if w.Header().Get(HeaderRequestID) == "" {
			w.Header().Set(HeaderRequestID, newRequestID())
		}
		WriteProblem(w, r, p)
	})
}
