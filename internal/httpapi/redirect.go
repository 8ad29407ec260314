package httpapi

import (
	"errors"
	"fmt"
	"net/http"
)

// ErrRedirect reports a redirect to another origin, which a client made
// by [SameOrigin] does not follow.
var ErrRedirect = errors.New("redirect to another origin refused")

// SameOrigin returns a copy of hc that refuses to follow a redirect to
// another scheme or host with an error wrapping [ErrRedirect]: a request
// may carry keys in headers of its own, and net/http's Client drops only
// Authorization and cookies on the way to another host. A redirect on
// the same origin goes to hc's CheckRedirect, if any, else follows the
// default policy of at most 10 redirects. hc is not modified.
func SameOrigin(hc *http.Client) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if from := via[0].URL; req.URL.Scheme != from.Scheme || req.URL.Host != from.Host {
			return fmt.Errorf("%w: %s://%s", ErrRedirect, req.URL.Scheme, req.URL.Host)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}
