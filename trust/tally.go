package trust

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// aggregate counts runs as votes with package consensus's majority:
// each run's label, its confidence, and for delegation its output, which
// groups under key, the call's answer key (see Service.answerKey).
// Failures are non-votes; cancelled runs are no votes at all.
//
// With reputation on, the votes are weighted (consensus.Weighted) by the
// reliabilities the runs record and snap's prior and correlation.
//
// A delegation that declares a numeric answer (task.answer "number") is
// counted by consensus.Median under task.tolerance, unweighted; key groups
// the answers of any other call.
func (s *Service) aggregate(req *Request, runs []router.Run, snap *router.ReputationSnapshot, key func(any) (string, error)) (consensus.Outcome, error) {
	if len(runs) == 0 {
		return consensus.Outcome{Winner: -1}, nil
	}
	var agg consensus.Aggregator = consensus.Majority{}
	switch {
	case req.numeric():
		agg = numericAggregator(req)
	case s.keep != nil:
		agg = consensus.Weighted{Reliabilities: reliabilities(runs, snap)}
	}
	return count(agg, req, runs, key)
}

// count counts runs as votes with agg under key (see aggregate).
func count(agg consensus.Aggregator, req *Request, runs []router.Run, key func(any) (string, error)) (consensus.Outcome, error) {
	mode := req.Mode
	votes := make([]consensus.Vote, len(runs))
	for i, r := range runs {
		v := consensus.Vote{Session: int64(r.SessionID), Label: consensus.Label(r.Label), Confidence: r.Confidence, Reason: r.Error}
		if v.Label == "" {
			v.Label = consensus.LabelError
		}
		if mode == ModeDelegation && r.Label == router.LabelOK {
			v.Answer = json.RawMessage(r.Output)
		}
		votes[i] = v
	}
	out, err := agg.Aggregate(votes, consensus.Policy{Key: key})
	if err != nil {
		return out, problem.Newf(http.StatusBadGateway, problem.CodeInternal, "trust: counting the runs: %v", err)
	}
	return out, nil
}

// accepts reports whether tier p may report the winner of out:
//
//	fast      a winner (one answer)
//	safe      a strict majority of at least two answers
//	oracle    a majority of the replicas launched answered, and none
//	          dissented
//	adaptive  consensus.Stop's Accept: settled, or once no run is left a
//	          strict majority of at least two answers or (weighted) a
//	          winner of at least two whose confidence is above one half
func (s *Service) accepts(req *Request, out consensus.Outcome, cal *reputation.Calibration) bool {
	p := req.Policy
	if out.Replicas == 0 || out.Winner < 0 || out.Agreeing == 0 {
		return false
	}
	switch p {
	case PolicyFast:
		return out.Agreeing > out.Against
	case PolicySafe:
		return out.Agreeing >= 2 && out.Agreeing > out.Against
	case PolicyOracle:
		return out.Against == 0 && 2*out.Agreeing > out.Replicas
	}
	return s.stop(req, cal).Accept(out)
}

// tally is the vote accounting of a trust call: every run of every step
// counted as one tally, whatever the tier. Its verdict or result is the
// winner's, its agreement and confidence the tally's (consensus.Posterior
// of the votes), its reasons those of the runs that back the winner, and
// its disagreements every run that answered otherwise or failed (every run
// not cancelled when the tier does not accept the winner). A one-call tier
// keeps the router's own result and reasons (its result only when the
// outputs are not grouped, WithGrouper). The consensus block is the
// router's for a one-call tier and the pooled tally's for adaptive, and
// for every tier when the outputs are grouped.
//
// With reputation on, the confidence is calibrated: the tally's
// consensus.Conservative number read on the calibration map of the
// call's tier in its scope (reputation.Calibration, calibrationTier),
// which the outcomes reported through Feedback build; for a numeric
// delegation, counted unweighted, that number is the median's Posterior.
// cals are the maps as the call read them once (Service.readScope), so
// that adaptive's stop and the number stated read the same maps.
func (s *Service) tally(ctx context.Context, req *Request, steps []stepResult, cals *scopeReading) (stepResult, error) {
	var runs []router.Run
	for _, st := range steps {
		if !st.step.Check {
			runs = append(runs, st.runs...)
		}
	}
	snap := lastSnapshot(steps)
	callKey, grouping, err := s.answerKey(ctx, req, runs)
	if err != nil {
		return stepResult{}, err
	}
	out, err := s.aggregate(req, runs, snap, callKey)
	if err != nil {
		return stepResult{}, err
	}
	coincide := cals.coincidence()
	reliability := pluralityReliability(runs, snap)
	out, recounted, err := recount(req, out, runs, callKey, cals.of(out), coincide, reliability)
	if err != nil {
		return stepResult{}, err
	}
	last := steps[len(steps)-1]
	final := stepResult{
		out:        out,
		runs:       runs,
		confidence: out.Confidence,
		agreement:  out.Agreement,
		verdicts:   make([]router.Label, len(out.Verdicts)),
		step:       last.step,
		consensus:  last.consensus,
		key:        callKey,
		grouping:   grouping,
	}
	final.step.Replicas = out.Replicas
	for i, l := range out.Verdicts {
		final.verdicts[i] = router.Label(l)
	}
	s.state(req, &final, steps[0].lead, cals, recounted, coincide, reliability)
	s.backing(req, &final)
	if len(steps) == 1 { // one router call: its own choice of result and reasons
		if len(last.reasons) > 0 && req.Mode != ModeDelegation {
			final.reasons = last.reasons
		}
		if req.Mode == ModeDelegation && !req.numeric() && grouping == nil { // grouped or numeric, the router counted otherwise
			final.result = last.result
		}
	}
	if req.Policy == PolicyAdaptive || grouping != nil { // the router's block counted bytes
		final.consensus = pooledBlock(final, snap, recounted || req.numeric())
		final.step.Error = ""
	}
	return final, nil
}

// state sets what final, the call's pooled tally, states: its confidence
// and the calibration basis it was read on, the plurality it was stated
// from, whether its tier accepts the winner, and the leader's record when
// the leader decided. lead is the record the call's first step ran under;
// cals the maps the call read; recounted whether recount counted the
// answers again by runs; coincide and reliability what a plurality's
// posterior was computed from.
func (s *Service) state(req *Request, final *stepResult, lead *reputation.Lead, cals *scopeReading, recounted bool, coincide, reliability float64) {
	out := final.out
	cal := cals.of(out)
	led := ledBy(lead, final.runs)
	if led {
		cal = cals.leaderMap(out.Label)
	}
	if s.keep != nil && (out.Strategy == consensus.StrategyWeighted || recounted || req.numeric()) && out.Winner >= 0 {
		if cal == nil { // the store failed: uncalibrated
			cal = &reputation.Calibration{Tier: calibrationTier(req, out.Label)}
			if led {
				cal.Tier += LeaderCalibrationSuffix
			}
		}
		c := consensus.Conservative(out)
		x := score(req, out.Confidence, c)
		// An open answer states the PluralityPosteriorAt of its groups
		// with no outcome; the map reads its counts, as the stop does.
		groups, _ := pluralityGroups(out, final.key) // it counted: no error
		plural := openAnswer(req) && out.Answered > 0 && len(groups) > 0
		switch {
		case recounted:
			x = consensus.Posterior(out.Agreeing, out.Against)
		case plural && out.Strategy == consensus.StrategyWeighted:
			c = min(out.Confidence, consensus.PluralityPosteriorAt(groups, 0, coincide, reliability))
		}
		if plural && (recounted || out.Strategy == consensus.StrategyWeighted) {
			final.plurality = &Plurality{Groups: groups, Coincidence: coincide, Reliability: reliability}
		}
		y, basis := cal.Basis(x, c)
		final.confidence, final.calibration = y, &basis
	}
	final.accepted = led || s.decides(req, out, cal, final.confidence)
	if led {
		final.lead = lead
	}
}

// backing sets final's winner (its verdict, or its result), the reasons
// of the runs that back it, and its disagreements: every run that
// answered otherwise or failed, or with no accepted winner every run that
// answered or failed.
func (s *Service) backing(req *Request, final *stepResult) {
	out := final.out
	key := final.key
	if key == nil {
		key = consensus.DefaultKey
	}
	var winKey string
	if out.Winner >= 0 {
		w := final.runs[out.Winner]
		if req.Mode == ModeDelegation {
			final.result = w.Output
			winKey, _ = key(json.RawMessage(w.Output)) // it counted: no error
			if req.numeric() {
				final.result = numericResult(out)
			}
		} else {
			final.verdict = router.Verdict(w.Label)
		}
	}
	backers := out.Backers(s.key)
	backs := func(i int, r router.Run) bool {
		if !final.accepted || r.Label != router.Label(out.Label) {
			return false
		}
		if req.Mode != ModeDelegation {
			return true
		}
		if req.numeric() {
			return slices.Contains(backers, i)
		}
		k, err := key(json.RawMessage(r.Output))
		return err == nil && k == winKey
	}
	final.disagreements = []Disagreement{}
	for i, r := range final.runs {
		switch {
		case backs(i, r):
			for _, reason := range r.Reasons {
				if !slices.Contains(final.reasons, reason) {
					final.reasons = append(final.reasons, reason)
				}
			}
		case r.Label != router.LabelCancelled:
			// With no verdict to report, every run that answered or
			// failed is listed: none backs an outcome.
			d := Disagreement{Replica: r.Replica, SessionID: r.SessionID, Label: r.Label, Reason: r.Error}
			if d.Reason == "" && len(r.Reasons) > 0 {
				d.Reason = r.Reasons[0]
			}
			final.disagreements = append(final.disagreements, d)
		}
	}
}

// pooledBlock is the consensus block of final, the pooled tally of a
// call whose router blocks do not count its votes (adaptive's several
// calls, or grouped outputs). With calibrated, the block names the
// calibration basis of an unweighted count too (a recount by runs, a
// numeric delegation). snap is the reputation snapshot of the last step.
func pooledBlock(final stepResult, snap *router.ReputationSnapshot, calibrated bool) *router.ConsensusResponse {
	out := final.out
	c := &router.ConsensusResponse{
		Replicas: out.Replicas, Agreement: out.Agreement, Verdicts: final.verdicts,
		Strategy: router.AggregationMajority, Confidence: final.confidence,
		LowConfidence: !final.accepted || out.Against > 0, Agreeing: out.Backers(final.key),
	}
	numericBlock(c, out)
	if out.Strategy == consensus.StrategyWeighted {
		c.Strategy, c.WeightBy = router.AggregationWeighted, router.WeightByReputation
		c.Reputation = &router.ReputationSnapshot{Correlation: out.Correlation, Tempering: consensus.Tempering(out.Answered, out.Correlation)}
		if snap != nil {
			c.Reputation.Prior = snap.Prior
		}
		c.Calibration = final.calibration
	}
	if calibrated {
		c.Calibration = final.calibration
	}
	return c
}
