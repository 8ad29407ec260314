package httpapi

import (
	"fmt"
	"net/http"

	"github.com/vouchkit/vouch/problem"
)

// OneHeader returns the value of the header name of h, "" when it is
// absent, or a 400 problem naming it, rule "unique", when the request
// sends it more than once: a field a request carries once, of whose
// copies a proxy before the server and the server could each read
// another.
func OneHeader(h http.Header, name string) (string, *problem.Details) {
	vals := h.Values(name)
	switch len(vals) {
	case 0:
		return "", nil
	case 1:
		return vals[0], nil
	}
	return "", HeaderProblem(name, "unique", fmt.Sprintf("is sent %d times; send it once", len(vals)))
}

// HeaderProblem returns the 400 invalid_request problem of the request
// header name that broke rule: its detail is the name followed by
// message, and its one field error names the header, as the field errors
// of a body name its members.
func HeaderProblem(name, rule, message string) *problem.Details {
	p := problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, name+" "+message)
	p.Errors = []problem.FieldError{{Field: name, Rule: rule, Message: message}}
	return p
}
