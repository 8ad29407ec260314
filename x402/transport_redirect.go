package x402

import (
	"net/http"
	"net/url"
	"strings"
)

// chainOrigin returns the URL of the first request of req's redirect
// chain: an http.Client sets the Response of a request it makes to follow
// a redirect, and that Response's Request is the previous one.
func chainOrigin(req *http.Request) *url.URL {
	for req.Response != nil && req.Response.Request != nil {
		req = req.Response.Request
	}
	return req.URL
}

// chainPaid reports whether a request before req in its redirect chain
// carried a payment proof: the Response net/http sets on a redirected
// request holds the request that was sent, with its headers.
func chainPaid(req *http.Request) bool {
	for req.Response != nil && req.Response.Request != nil {
		req = req.Response.Request
		if req.Header.Get(HeaderPaymentSignature) != "" || req.Header.Get(HeaderXPayment) != "" {
			return true
		}
	}
	return false
}

// sameOrigin reports whether a and b have the same scheme and host.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}
