package router

import (
	"context"
	"fmt"
	"net/http"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/reputation"
)

// pick chooses n distinct sessions for a version 3 call in scope, in the
// order documented on [Engine.ValidateV3]: first (if set and fit), then
// the candidates rotated by a per-engine counter (with reputation on,
// ranked as [Engine.Rank] does), sessions from pools not yet used before
// the others. It returns what it ranked them by (a zero Reading with
// reputation off): the Reading ctx holds (WithReading), or else what it
// read of the book in one store read, the fit sessions' reliabilities
// with what need asks beside them, for the call's calibration and
// learning. poolField is the JSON path of pool in the request, for
// errors.
func (e *Engine) pick(ctx context.Context, first SessionID, pool []SessionID, poolField string, tier Tier, n int, scope reputation.Scope, need needs) ([]*session, Reading, error) {
	var read Reading
	var bad []FieldError
	if first != 0 && e.byID[first] == nil {
		bad = append(bad, unknownSession("session_id", first).Errors...)
	}
	for i, id := range pool {
		if e.byID[id] == nil {
			bad = append(bad, unknownSession(fmt.Sprintf("%s[%d]", poolField, i), id).Errors...)
		}
	}
	if len(bad) > 0 {
		return nil, read, problem.Invalid(bad)
	}

	candidates := e.sessions
	if len(pool) > 0 {
		candidates = make([]*session, len(pool))
		for i, id := range pool {
			candidates[i] = e.byID[id]
		}
	}
	lead := e.byID[first] // nil when first is unset
	order := make([]*session, 0, len(candidates)+1)
	if lead != nil {
		order = append(order, lead)
	}
	for _, s := range candidates {
		if s != lead {
			order = append(order, s)
		}
	}
	now := e.now()
	fit := make([]*session, 0, len(order))
	var wrongTier, cooling int
	for _, s := range order {
		switch ok, _ := s.healthy(now); {
		case !s.serves(tier):
			wrongTier++
		case !ok:
			cooling++
		default:
			fit = append(fit, s)
		}
	}
	// Rotate the fit sessions after the lead, so that calls without a
	// lead spread over the candidates.
	from := 0
	if len(fit) > 0 && fit[0] == lead {
		from = 1
	}
	if e.rep != nil {
		var ok bool
		if read, ok = reading(ctx, scope, fit); !ok {
			var err error
			if read, err = e.read(ctx, scope, fit, need); err != nil {
				e.log.Warn("router: reading session reliabilities; every session weighs as the prior", "error", err)
				read = Reading{Scope: scope, Reliabilities: consensus.Reliabilities{Prior: e.rep.Options().Prior.Mean()}}
			}
		}
		e.order(fit[from:], read.Reliabilities, read.Evidence)
	} else if rest := fit[from:]; len(rest) > 1 {
		k := int((e.next.Add(1) - 1) % uint64(len(rest)))
		rotated := append(append(make([]*session, 0, len(rest)), rest[k:]...), rest[:k]...)
		copy(rest, rotated)
	}
	if len(fit) < n {
		what := "this router has" // counts of sessions, not of what each offers
		if len(pool) > 0 {
			what = poolField + " holds"
		}
		tierText := "any tier"
		if tier != "" {
			tierText = fmt.Sprintf("tier %q", tier)
		}
		if serving := len(order) - wrongTier; serving < n { // never servable: the request's mistake
			return nil, read, problem.Invalid([]FieldError{{Field: replicasField(poolField), Rule: "servable",
				Message: fmt.Sprintf("%d replicas need %d distinct sessions serving %s; %s %d, healthy or not, so it can never serve the call", n, n, tierText, what, serving)}})
		}
		return nil, read, problem.Newf(http.StatusServiceUnavailable, problem.CodeInsufficientSessions,
			"%d replicas need %d distinct healthy sessions serving %s; %s %d now (%d do not serve the tier, %d are cooling down)",
			n, n, tierText, what, len(fit), wrongTier, cooling)
	}

	chosen := make([]*session, 0, n)
	used := make(map[string]bool, n)
	taken := make(map[*session]bool, n)
	for pass := 0; pass < 2 && len(chosen) < n; pass++ {
		for _, s := range fit {
			if len(chosen) == n {
				break
			}
			key := poolKey(s)
			if taken[s] || (pass == 0 && used[key]) {
				continue
			}
			chosen = append(chosen, s)
			taken[s], used[key] = true, true
		}
	}
	if e.rep != nil {
		e.usage.add(chosen)
	}
	return chosen, read, nil
}

// poolKey names the pool of s; a session without a pool is a pool of its
// own.
func poolKey(s *session) string {
	if s.Pool == "" {
		return "\x00" + s.ID.String()
	}
	return s.Pool
}
