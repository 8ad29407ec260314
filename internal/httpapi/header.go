package httpapi

import (
	"net/http"

	"github.com/vouchkit/vouch/problem"
)

// OneHeader returns the value of the header name of h, "" when it is
// absent, or a 400 problem when the request sends it more than once: a
// field a request carries once, of whose copies a proxy before the
// server and the server could each read another.
func OneHeader(h http.Header, name string) (string, *problem.Details) {
	vals := h.Values(name)
	switch len(vals) {
	case 0:
		return "", nil
	case 1:
		return vals[0], nil
	}
	return "", problem.Newf(http.StatusBadRequest, problem.CodeInvalidRequest,
		"%s is sent %d times; send it once", name, len(vals))
}
