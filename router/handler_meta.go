package router

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/release"
	"github.com/vouchkit/vouch/x402"
)

// pong is the answer of the ping routes.
type pong struct {
	Message string `json:"message"`
}

// runner returns what the endpoint of op does with a request body: call
// the Service, or answer a meta route. about is the Handler's answer to
// GET /api/v1/about.
func (h *Handler) runner(svc Service, op Operation, about *About) func(body []byte) (httpapi.Run, error) {
	answer := func(v any) func([]byte) (httpapi.Run, error) {
		return func([]byte) (httpapi.Run, error) {
			return func(context.Context) (any, error) { return v, nil }, nil
		}
	}
	switch op {
	case OpPing:
		return answer(&pong{Message: "pong"})
	case OpAbout:
		return answer(about)
	case OpStatus:
		return func([]byte) (httpapi.Run, error) {
			return func(ctx context.Context) (any, error) { return h.status(ctx, svc) }, nil
		}
	case OpFeedback:
		return feedbackRunner(svc)
	}
	decode := decoderFor(op)
	if decode == nil {
		panic("router: no endpoint for operation " + string(op)) // Routes and decoderFor list the same operations
	}
	return func(body []byte) (httpapi.Run, error) { return decode(svc, body) }
}

// status answers GET /api/v1/status: the Service's report, if it gives
// one, with the Handler's counts of calls.
func (h *Handler) status(ctx context.Context, svc Service) (*Status, error) {
	st := &Status{}
	if sr, ok := svc.(StatusReporter); ok {
		got, err := sr.Status(ctx)
		if err != nil {
			return nil, err
		}
		if got == nil {
			return nil, errors.New("router: the Service's Status returned a nil status and a nil error")
		}
		st.Sessions = got.Sessions
	}
	st.Calls = h.Calls()
	for _, more := range h.moreCalls {
		for route, n := range more() {
			st.Calls[route] += n
		}
	}
	return st, nil
}

// Calls returns the counts of GET /api/v1/status's calls member for the
// Handler's own routes: by "METHOD PATH", the requests admitted since
// NewHandler, every route listed. It is safe to call concurrently with
// requests.
func (h *Handler) Calls() map[string]int64 {
	out := make(map[string]int64, len(h.calls))
	for route, n := range h.calls {
		out[route] = n.Load()
	}
	return out
}

// defaultServiceName is the service name GET /api/v1/about reports unless
// the host names one.
const defaultServiceName = "vouch router"

// about builds the answer to GET /api/v1/about from the options.
func (h *Handler) about() (*About, error) {
	a := &About{Service: h.name, Version: h.version, Variants: []Variant{VariantNormal, VariantTrial}}
	if a.Service == "" {
		a.Service = defaultServiceName
	}
	if a.Version == "" {
		a.Version = release.Version
	}
	if h.cfg.X402 != nil {
		a.Variants = append(a.Variants, VariantX402)
	}
	if h.prices == nil {
		return a, nil
	}
	if h.cfg.X402 == nil {
		return nil, errors.New("x402 prices are given without the x402 middleware (WithX402)")
	}
	mux := http.NewServeMux()
	used := make(map[string]bool, len(h.prices))
	for pattern := range h.prices {
		if err := register(mux, pattern); err != nil {
			return nil, fmt.Errorf("x402 price pattern %q: %v", pattern, err)
		}
	}
	for _, rt := range Routes() {
		if rt.Variant != VariantX402 {
			continue
		}
		_, pattern := mux.Handler(&http.Request{Method: rt.Method, URL: &url.URL{Path: rt.Path}})
		p, ok := h.prices[pattern]
		if !ok {
			continue
		}
		rp := RoutePrice{Method: rt.Method, Path: rt.Path, Description: p.Description, Accepts: make([]x402.PaymentRequirements, len(p.Accepts))}
		for i, o := range p.Accepts {
			if n, ok := x402.NetworkCAIP2(o.Network); ok {
				o.Network = n
			}
			rp.Accepts[i] = o
		}
		a.Prices = append(a.Prices, rp)
		used[pattern] = true
	}
	a.Prices = append(a.Prices, otherPrices(h.prices, used)...)
	return a, nil
}

// otherPrices lists the priced patterns that no route of the Handler
// used, when each names one method and one exact path ("POST
// /api/v4/x402/trust"): the routes of another handler the host serves
// beside this one under the same x402 middleware. They come after the
// Handler's own, sorted by path and method.
func otherPrices(prices map[string]x402.Price, used map[string]bool) []RoutePrice {
	var out []RoutePrice
	for pattern, p := range prices {
		method, path, ok := strings.Cut(pattern, " ")
		if used[pattern] || !ok || method == "" || !strings.HasPrefix(path, "/") ||
			strings.ContainsAny(path, "{} ") || strings.HasSuffix(path, "/") {
			continue
		}
		rp := RoutePrice{Method: method, Path: path, Description: p.Description, Accepts: make([]x402.PaymentRequirements, len(p.Accepts))}
		for i, o := range p.Accepts {
			if n, ok := x402.NetworkCAIP2(o.Network); ok {
				o.Network = n
			}
			rp.Accepts[i] = o
		}
		out = append(out, rp)
	}
	slices.SortFunc(out, func(a, b RoutePrice) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Method, b.Method))
	})
	return out
}

// register adds pattern to mux, turning its panic on a bad or conflicting
// pattern into an error.
func register(mux *http.ServeMux, pattern string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	mux.Handle(pattern, http.NotFoundHandler())
	return nil
}
