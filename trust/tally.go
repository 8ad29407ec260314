package trust

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust/internal/decide"
)

// tally is the vote accounting of a trust call: every run of every step
// counted as one tally, whatever the tier. Its verdict or result is the
// winner's, its agreement and confidence the tally's (consensus.Posterior
// of the votes), its reasons those of the runs that back the winner, and
// its disagreements every run that answered otherwise or failed (every run
// not cancelled when the tier does not accept the winner). A one-call tier
// keeps the router's own result and reasons (its result only when the
// outputs are not grouped, WithGrouper, and the result is an answer of
// the tally's winning group). The consensus block is the
// router's for a one-call tier and the pooled tally's for adaptive, and
// for every tier when the outputs are grouped.
//
// With reputation on, the confidence is calibrated: the tally's
// consensus.Conservative number read on the calibration map of the
// call's tier in its scope (reputation.Calibration,
// decide.Rules.CalibrationTier), which the outcomes reported through
// Feedback build; for a numeric delegation, counted unweighted, that
// number is the median's Posterior. The tally asks decide.Rules.Decide
// once for what it states and whether its tier accepts it, on cals, the
// maps as the call read them once (Service.readScope), so that
// adaptive's stop and the number stated read the same maps.
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
	led := ledBy(steps[0].lead, runs)
	d, err := s.rules(req).Decide(cals.tables(), decide.Tally{Runs: runs, Snapshot: snap, Key: callKey, Led: led})
	if err != nil {
		return stepResult{}, err
	}
	out := d.Out
	last := steps[len(steps)-1]
	final := stepResult{
		out:         out,
		runs:        runs,
		confidence:  d.Confidence,
		calibration: d.Basis,
		accepted:    d.Accepted,
		dissent:     d.Dissent,
		agreement:   out.Agreement,
		verdicts:    make([]router.Label, len(out.Verdicts)),
		step:        last.step,
		consensus:   last.consensus,
		key:         callKey,
		grouping:    grouping,
	}
	final.step.Replicas = out.Replicas
	for i, l := range out.Verdicts {
		final.verdicts[i] = router.Label(l)
	}
	if d.Groups != nil {
		final.plurality = &Plurality{Groups: d.Groups, Coincidence: d.Coincidence, Reliability: d.Reliability}
	}
	if d.Lone != nil {
		final.lone = &Lone{Threshold: s.threshold, Confidence: *d.Lone}
	}
	if led {
		final.lead = steps[0].lead
	}
	s.backing(req, &final)
	if len(steps) == 1 { // one router call: its own choice of result and reasons
		if len(last.reasons) > 0 && req.Mode != ModeDelegation {
			final.reasons = last.reasons
		}
		if req.Mode == ModeDelegation && !req.numeric() && grouping == nil && final.backedBy(last.result) { // grouped or numeric, the router counted otherwise
			final.result = last.result
		}
	}
	if req.Policy == PolicyAdaptive || grouping != nil { // the router's block counted bytes
		final.consensus = pooledBlock(final, snap, d.Recounted || req.numeric())
		final.step.Error = ""
	}
	return final, nil
}

// backedBy reports whether final, the tally of one router call, may
// state r, the router's own result, in place of its winner's output: r
// is an answer of the winning group under the call's key (or the runs
// carry no output to tell), or null when the tier accepts nothing. A
// router counting by another key than the service's (WithAnswerKey)
// chooses another winner, or refuses one the service's count accepts.
func (final *stepResult) backedBy(r json.RawMessage) bool {
	if len(r) == 0 || string(r) == "null" {
		return !final.accepted
	}
	if final.out.Winner < 0 {
		return false
	}
	out := final.runs[final.out.Winner].Output
	if len(out) == 0 {
		return true // the runs carry no output to tell the answers apart
	}
	key := final.key
	if key == nil {
		key = consensus.DefaultKey
	}
	k, err := key(r)
	w, werr := key(json.RawMessage(out))
	return err == nil && werr == nil && k == w
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
