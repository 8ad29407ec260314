package router_test

import (
	"net/http"
	"sync/atomic"
	"testing"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/router"
)

// contractTarget is one way of running the contract.
type contractTarget struct {
	name string
	// variant is the variant the target calls; it serves the operations
	// that have it.
	variant router.Variant
	// alias, if set, makes the target call each route by its alias, and
	// serve only the operations that have one.
	alias bool
	// serve returns the Service to call in front of e, and a check to run
	// on each call's error once it returns (nil: none).
	serve func(t *testing.T, e *router.Engine) (router.Service, func(t *testing.T, err error))
}

// serves reports whether the target runs operation op.
func (tg contractTarget) serves(op router.Operation) bool {
	if _, ok := router.RoutePath(op, tg.variant); !ok {
		return false
	}
	return !tg.alias || aliasOf(op, tg.variant) != ""
}

const contractKey = "contract-key"

func contractTargets() []contractTarget {
	var targets []contractTarget
	for _, lc := range []loopbackConfig{
		{variant: router.VariantNormal},
		{variant: router.VariantTrial},
		{variant: router.VariantX402},
		{variant: router.VariantNormal, alias: true},
		{variant: router.VariantTrial, alias: true},
		{variant: router.VariantX402, alias: true},
		{variant: router.VariantNormal, stringIDs: true},
	} {
		targets = append(targets, contractTarget{name: lc.name(), variant: lc.variant, alias: lc.alias,
			serve: func(t *testing.T, e *router.Engine) (router.Service, func(*testing.T, error)) {
				return serveLoopback(t, e, lc)
			}})
	}
	return append([]contractTarget{{name: "engine", variant: router.VariantNormal,
		serve: func(t *testing.T, e *router.Engine) (router.Service, func(*testing.T, error)) { return e, nil }}}, targets...)
}

// loopbackConfig says how a Client calls a Handler over loopback.
type loopbackConfig struct {
	variant   router.Variant
	alias     bool // call each route by its alias
	stringIDs bool // router.WithSessionIDsAsStrings
}

func (lc loopbackConfig) name() string {
	n := "loopback"
	if lc.variant != router.VariantNormal {
		n += "-" + string(lc.variant)
	}
	if lc.alias {
		n += "-alias"
	}
	if lc.stringIDs {
		n += "-string-ids"
	}
	return n
}

// serveLoopback returns a Client of lc's variant calling a Handler in
// front of e over loopback, with retries off so that every call reaches
// the engine once. The Handler knows contractKey, lets trial callers
// through without limit, and prices every x402 route as a paidServer
// does; an x402 Client pays through an x402.Transport. The check asserts, for x402, that a
// successful call settled one payment and a failed one none, and, for an
// alias target, that the call went to an alias path.
func serveLoopback(t *testing.T, e *router.Engine, lc loopbackConfig) (router.Service, func(*testing.T, error)) {
	srv := newPaidServer(t, e,
		router.WithAuthenticator(router.KeyAuthenticator(map[string]string{contractKey: "contract"})),
		router.WithTrialLimit(router.TrialLimit{Rate: rate.Inf}))
	rt := srv.Client().Transport
	if lc.variant == router.VariantX402 {
		rt = srv.payingClient(t, rt).Transport
	}
	var rewritten *atomic.Int64
	if lc.alias {
		a := &aliasTransport{base: rt, aliases: aliases(lc.variant)}
		rt, rewritten = a, &a.rewritten
	}
	opts := []router.ClientOption{router.WithClientVariant(lc.variant), router.WithHTTPClient(&http.Client{Transport: rt}),
		router.WithRetry(router.RetryPolicy{}), router.WithAPIKey(contractKey)}
	if lc.stringIDs {
		opts = append(opts, router.WithSessionIDsAsStrings())
	}
	c, err := router.NewClient(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, func(t *testing.T, err error) {
		if lc.variant == router.VariantX402 {
			want := 1
			if err != nil {
				want = 0 // the Middleware settles only answers below 400
			}
			if got := len(srv.fac.Settlements()); got != want {
				t.Errorf("settlements = %d, want %d (call error: %v)", got, want, err)
			}
		}
		if rewritten != nil && rewritten.Load() == 0 {
			t.Errorf("no request went to an alias path")
		}
	}
}

// aliases maps the canonical path of each route of variant v that has an
// alias to that alias.
func aliases(v router.Variant) map[string]string {
	m := map[string]string{}
	for _, rt := range router.Routes() {
		if rt.Alias && rt.Variant == v {
			canonical, _ := router.RoutePath(rt.Op, v)
			m[canonical] = rt.Path
		}
	}
	return m
}

// aliasOf returns the alias of op's route in variant v, or "".
func aliasOf(op router.Operation, v router.Variant) string {
	p, _ := router.RoutePath(op, v)
	return aliases(v)[p]
}

// aliasTransport sends each request whose path has an alias to the alias,
// counting them.
type aliasTransport struct {
	base      http.RoundTripper
	aliases   map[string]string
	rewritten atomic.Int64
}

func (a *aliasTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	alias, ok := a.aliases[req.URL.Path]
	if !ok {
		return a.base.RoundTrip(req)
	}
	a.rewritten.Add(1)
	r := req.Clone(req.Context())
	r.URL.Path = alias
	return a.base.RoundTrip(r)
}
