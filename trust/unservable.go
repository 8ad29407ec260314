package trust

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// ErrNoStatus is returned by [Service.Unservable] when the router does
// not report its sessions (router.StatusReporter), or its report failed.
var ErrNoStatus = errors.New("trust: the router does not report its sessions")

// Unservable returns the policies, in the order fast, safe, oracle,
// adaptive, that this service's router can never serve: fewer of its
// sessions (those of WithSessionPool, when set), healthy or not, serve
// the policy's router tier than the policy runs replicas (fast 1, safe
// 3, oracle 5; adaptive needs one session serving the fast tier to start
// and settles on what it can run). A call under such a policy is a 400
// naming policy. An empty result means every policy can be served while
// the sessions are healthy.
//
// New does not check this: it takes no context while a remote router
// answers over the network, and a host that serves only some tiers (one
// session for fast calls) is a valid deployment. Call Unservable after
// New, at start-up, to refuse or report a configuration. It fails with
// an error wrapping ErrNoStatus when the router reports no sessions.
func (s *Service) Unservable(ctx context.Context) ([]Policy, error) {
	sr, ok := s.router.(router.StatusReporter)
	if !ok {
		return nil, ErrNoStatus
	}
	st, err := sr.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoStatus, err)
	}
	serving := func(t router.Tier) int {
		n := 0
		for _, ss := range st.Sessions {
			if (len(s.pool) == 0 || slices.Contains(s.pool, ss.ID)) && (len(ss.Tiers) == 0 || slices.Contains(ss.Tiers, t)) {
				n++
			}
		}
		return n
	}
	var out []Policy
	for _, p := range []Policy{PolicyFast, PolicySafe, PolicyOracle, PolicyAdaptive} {
		r := plan(p)
		if p == PolicyAdaptive {
			r.replicas = 1
		}
		if serving(r.tier) < r.replicas {
			out = append(out, p)
		}
	}
	return out, nil
}

// unservable turns the router's refusal of a replica count it can never
// serve (rule "servable" on consensus.replicas) into a 400 naming the
// call's policy, the member the caller sent; any other error is
// returned as is.
func unservable(err error, r rung) error {
	var p *problem.Details
	if !errors.As(err, &p) || p.Code != problem.CodeInvalidRequest || len(p.Errors) != 1 ||
		p.Errors[0].Field != "consensus.replicas" || p.Errors[0].Rule != "servable" {
		return err
	}
	return problem.Invalid([]problem.FieldError{{Field: "policy", Rule: "servable",
		Message: fmt.Sprintf("runs %d replicas on router tier %q, which the router can never serve: %s", r.replicas, r.tier, p.Errors[0].Message)}})
}
