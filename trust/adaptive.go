package trust

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// candidate is a session adaptive may run on.
type candidate struct {
	id    router.SessionID
	tiers []router.Tier // empty: every tier
}

func (c candidate) serves(t router.Tier) bool {
	return len(c.tiers) == 0 || slices.Contains(c.tiers, t)
}

// candidates returns the sessions adaptive may run on, in the order to
// try them: the single session first (WithSingleSession), then the pool
// (WithSessionPool), or else the sessions the router reports through
// router.StatusReporter that are not cooling down; rotated by one place
// per call so that load spreads. nil means none is known: adaptive's runs
// then go to whatever session the router picks (and WithSingleSession
// plays no part).
func (s *Service) candidates(ctx context.Context) []candidate {
	cs := s.sessions(ctx)
	if len(cs) > 1 {
		k := int((s.next.Add(1) - 1) % uint64(len(cs)))
		cs = append(cs[k:], cs[:k]...)
	}
	if s.session != 0 && cs != nil {
		i := slices.IndexFunc(cs, func(c candidate) bool { return c.id == s.session })
		if i < 0 {
			cs = append([]candidate{{id: s.session}}, cs...)
		} else {
			cs = append(append([]candidate{cs[i]}, cs[:i]...), cs[i+1:]...)
		}
	}
	return cs
}

// sessions returns the sessions of the service's pool (WithSessionPool),
// or else those the router reports through router.StatusReporter that
// are not cooling down, in the order given; nil when none is known.
func (s *Service) sessions(ctx context.Context) []candidate {
	var cs []candidate
	switch sr, ok := s.router.(router.StatusReporter); {
	case len(s.pool) > 0:
		for _, id := range s.pool {
			cs = append(cs, candidate{id: id})
		}
	case ok:
		st, err := sr.Status(ctx)
		if err != nil {
			s.logger.DebugContext(ctx, "trust: the router reports no sessions; adaptive runs where it routes them", "error", err)
			break
		}
		for _, ss := range st.Sessions {
			if ss.Health != router.HealthCoolingDown {
				cs = append(cs, candidate{id: ss.ID, tiers: ss.Tiers})
			}
		}
	}
	return cs
}

// adaptive runs the adaptive tier: one pooled, sequential decision. It
// launches runs in small batches, each run a router call of one replica
// on a session the call has not used yet, pools every vote into one
// outcome, and stops as soon as consensus.Stop says the outcome is
// settled, after 5 runs, or when no unused session is left. Each batch is
// as large as the fewest runs that could settle the call (Stop.Next): 1
// to start (2 when a single answer may never settle it), then 1 or 2 at a
// time. A run that fails (ERROR, TIMEOUT, or a router error other than a
// refusal of the request) is a failed vote and the call goes on. It
// returns every step, one per router call, even when none of their runs
// answered by the caller's deadline (see noVoteBy); a caller that
// cancels, between batches as during one, ends it with the context's
// error instead. Sessions in exclude are treated as used from the start
// (a judged delegation's producers).
// It returns as well what the call read of its scope (Service.readScope),
// once its candidates were known: their reliabilities and the leader
// among them with the calibration maps.
func (s *Service) adaptive(ctx context.Context, req *Request, exclude ...router.SessionID) ([]stepResult, *scopeReading, error) {
	rules := s.rules(req)
	cands := s.candidates(ctx)
	cals := s.readScope(ctx, req, s.rankable(cands), leaderCandidates(cands, exclude))
	cands, rel := s.ranked(cands, cals)
	lead, leads := cals.leader()
	check := leads && s.checking()
	ctx = cals.handed(ctx, req)
	if leads {
		cands = first(cands, router.SessionID(lead.Session))
	}
	used := make(map[router.SessionID]bool, consensus.DefaultMaxRuns)
	for _, id := range exclude {
		used[id] = true
	}
	var steps []stepResult
	var runs []router.Run
	out := consensus.Outcome{}
	for batches := 0; ; batches++ {
		stop := rules.StopAfter(cals.tables(), out)
		if s.keep != nil {
			stop.Weight = nextWeight(cands, used, rel)
		}
		if err := cancelled(ctx); err != nil { // the caller left: no answer
			return nil, nil, err
		}
		k := rules.Next(stop, out)
		if k == 0 || batches > 0 && outOfTime(ctx) { // at the caller's deadline: the votes in
			break
		}
		batch := pickSessions(cands, used, len(runs), k)
		if leads && batches == 0 {
			batch = cands[:1:1]
			if check {
				batch = append(batch, pickSessions(cands[1:], used, 1, 1)...)
			}
		}
		if len(batch) == 0 {
			break
		}
		if batches > 0 {
			for i := range steps {
				steps[i].step.Escalated = true
			}
			s.logger.DebugContext(ctx, "trust: escalating", "runs", len(runs), "more", len(batch), "agreement", out.Agreement)
		}
		from := len(runs)
		results, errs := s.runBatch(ctx, req, batch, func(j int) router.Tier { return adaptiveTier(from + j) })
		for j, c := range batch {
			st, err := oneRun(ctx, req.Mode, results[j], errs[j], c.id, adaptiveTier(from+j))
			if err != nil {
				return nil, nil, err
			}
			for i := range st.runs {
				r := &st.runs[i]
				if used[r.SessionID] { // the router chose a session already used
					r.Label, r.Error = router.LabelError, "session already used by this call: not an independent run"
					r.Output, r.Reasons, r.Confidence = nil, nil, 0
				}
				used[r.SessionID] = true
				if c.id != 0 {
					used[c.id] = true
				}
				r.Replica = len(runs)
				runs = append(runs, *r)
			}
			steps = append(steps, st)
		}
		if leads && batches == 0 && ledBy(&lead, runs[:len(steps[0].runs)]) {
			steps[0].lead = &lead
			if len(steps) > 1 {
				steps[1].step.Check = true // its runs count in no tally
			}
			break
		}
		key, _, err := s.answerKey(ctx, req, runs)
		if err != nil {
			return nil, nil, err
		}
		if out, err = rules.Count(runs, lastSnapshot(steps), key); err != nil {
			return nil, nil, err
		}
	}
	if len(steps) == 0 {
		return nil, nil, problem.New(http.StatusServiceUnavailable, problem.CodeInsufficientSessions,
			"trust: adaptive found no session to run on")
	}
	return steps, cals, nil
}

// runBatch runs req on each session of batch at once, one router call of
// one replica each, run j at tier(j) (or at no tier when its session
// does not serve that one), and returns each call's step and error.
func (s *Service) runBatch(ctx context.Context, req *Request, batch []candidate, tier func(j int) router.Tier) ([]stepResult, []error) {
	results := make([]stepResult, len(batch))
	errs := make([]error, len(batch))
	panics := make([]any, len(batch))
	var wg sync.WaitGroup
	for j, c := range batch {
		wg.Go(func() {
			// A router.Service that panics panics in the caller's
			// goroutine, as it does for the tiers that run it there
			// (an HTTP server recovers it), not in this one, where
			// nothing would.
			defer func() { panics[j] = recover() }()
			t := tier(j)
			if c.id != 0 && !c.serves(t) {
				t = "" // the session serves no such tier: ask for none
			}
			results[j], errs[j] = s.runOn(ctx, req, rung{t, 1, router.DisagreeBestEffort}, c.id)
		})
	}
	wg.Wait()
	for _, v := range panics {
		if v != nil {
			panic(v)
		}
	}
	return results, errs
}

// oneRun returns st, the step of a router call of one replica on session
// id at tier, as a vote of the call: the failed run err makes of it, or
// of a step that holds no run or several. It returns an error that ends
// the call instead: the caller gone, or the request refused.
func oneRun(ctx context.Context, mode Mode, st stepResult, err error, id router.SessionID, tier router.Tier) (stepResult, error) {
	if err != nil {
		if errors.Is(ctx.Err(), context.Canceled) {
			return stepResult{}, ctx.Err()
		}
		if refused(err) {
			return stepResult{}, err
		}
		st = failedRun(err, mode, id, tier)
	}
	if len(st.runs) != 1 {
		st = failedRun(fmt.Errorf("trust: the router returned %d runs for one", len(st.runs)), mode, id, tier)
	}
	return st, nil
}

// pickSessions returns up to k unused candidates for runs from, preferring
// for each run a session that serves its tier. With no candidates known
// it returns k zero candidates: the router picks the sessions.
func pickSessions(cands []candidate, used map[router.SessionID]bool, from, k int) []candidate {
	if cands == nil {
		return make([]candidate, k)
	}
	var out []candidate
	taken := func(c candidate) bool {
		return used[c.id] || slices.ContainsFunc(out, func(o candidate) bool { return o.id == c.id })
	}
	for j := range k {
		tier := adaptiveTier(from + j)
		i := slices.IndexFunc(cands, func(c candidate) bool { return !taken(c) && c.serves(tier) })
		if i < 0 {
			i = slices.IndexFunc(cands, func(c candidate) bool { return !taken(c) })
		}
		if i < 0 {
			break
		}
		out = append(out, cands[i])
	}
	return out
}

// NumericCalibrationSuffix ends the name of the calibration map of the
// delegations that declare a numeric answer (task.answer "number"):
// "safe/number", "adaptive/number". Their confidence, the Posterior of
// the runs within the tolerance of the median and of the others, means
// another thing than a plurality's of the same tier, so their outcomes
// build a map of their own.
const NumericCalibrationSuffix = "/number"

// refused reports whether err refuses the request itself (400, 401, 402,
// 403), which another session would refuse as well; so does a router
// that has no route for the call's variant (router.ErrNoVariant:
// version 3 in the trial or x402 variant).
func refused(err error) bool {
	if errors.Is(err, router.ErrNoVariant) {
		return true
	}
	var p *problem.Details
	if !errors.As(err, &p) {
		return false
	}
	switch p.Status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden:
		return true
	}
	return false
}

// failed reports whether l is the label of a run that gave no answer.
func failed(l router.Label) bool {
	return l == router.LabelError || l == router.LabelTimeout || l == router.LabelCancelled
}

// failedRun is the step of a router call of one replica that erred: the
// run the error's evidence holds, or else a run labelled TIMEOUT (a 504,
// or a call the caller's deadline cut short) or ERROR on the session
// asked for. A failed call is no vote: only a disagreement's evidence
// keeps a run that answered, and a run of another failure's evidence
// (a remote router's, which the Client does not check) that claims an
// answer is labelled as the failure, its answer dropped. Evidence that
// does not decode (see problemEvidence) makes the run ERROR, its error
// naming the member, as the Client's refusal of it does.
func failedRun(err error, mode Mode, id router.SessionID, tier router.Tier) stepResult {
	route := "/api/v3/validate"
	if mode == ModeDelegation {
		route = "/api/v3/delegate"
	}
	var extra struct {
		Runs []router.Run `json:"runs"`
	}
	var p *problem.Details
	if errors.As(err, &p) {
		if perr := problemEvidence(p, &extra); perr != nil {
			err, p = perr, nil // a failure naming the member, as over the Client
		}
	}
	label := router.LabelError
	if p != nil && p.Status == http.StatusGatewayTimeout || errors.Is(err, context.DeadlineExceeded) {
		label = router.LabelTimeout // a remote router's call cut short by the caller's deadline, too
	}
	runs := extra.Runs
	switch {
	case len(runs) != 1:
		runs = []router.Run{{SessionID: id, Label: label, Error: err.Error()}}
	case p.Code != problem.CodeDisagreement && !failed(runs[0].Label):
		r := &runs[0]
		r.Label, r.Error = label, err.Error()
		r.Output, r.Reasons, r.Confidence = nil, nil, 0
	}
	st := stepResult{runs: runs, verdicts: []router.Label{runs[0].Label}}
	st.step = newStep(route, rung{tier, 1, router.DisagreeBestEffort}, "", "", st)
	st.step.Error = fmt.Sprint(err)
	return st
}
