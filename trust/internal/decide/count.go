package decide

import (
	"encoding/json"
	"net/http"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// Count counts runs as votes: each run's label, its confidence, and for
// a delegation its output, which groups under key, the call's answer key
// (nil: consensus.DefaultKey). Failures are non-votes; cancelled runs
// are no votes at all. The votes are counted by consensus.Majority; with
// the rules Calibrated, weighted (consensus.Weighted) by the
// reliabilities the runs record and snap's prior and correlation
// (Reliabilities); for a numeric delegation, by consensus.Median under
// Tolerance, unweighted. No run is no winner.
func (r Rules) Count(runs []router.Run, snap *router.ReputationSnapshot, key func(any) (string, error)) (consensus.Outcome, error) {
	if len(runs) == 0 {
		return consensus.Outcome{Winner: -1}, nil
	}
	var agg consensus.Aggregator = consensus.Majority{}
	switch {
	case r.Numeric:
		agg = consensus.Median{Tolerance: r.Tolerance}
	case r.Calibrated:
		agg = consensus.Weighted{Reliabilities: Reliabilities(runs, snap)}
	}
	votes := make([]consensus.Vote, len(runs))
	for i, run := range runs {
		v := consensus.Vote{Session: int64(run.SessionID), Label: consensus.Label(run.Label), Confidence: run.Confidence, Reason: run.Error}
		if v.Label == "" {
			v.Label = consensus.LabelError
		}
		if r.Delegation && run.Label == router.LabelOK {
			v.Answer = json.RawMessage(run.Output)
		}
		votes[i] = v
	}
	out, err := agg.Aggregate(votes, consensus.Policy{Key: key})
	if err != nil {
		return out, counting(err)
	}
	return out, nil
}

// counting is the error of a count that failed (a key that cannot read
// an answer): 500, not a 502 a client would retry, since the runs ran
// and a retry would run them again.
func counting(err error) error {
	return problem.Newf(http.StatusInternalServerError, problem.CodeInternal, "trust: counting the runs: %v", err)
}

// Reliabilities returns what runs are weighed with: each run's recorded
// reliability and confidence slope, and the prior and correlation of
// snap, the reputation snapshot of the router call that ran them.
func Reliabilities(runs []router.Run, snap *router.ReputationSnapshot) consensus.Reliabilities {
	rel := consensus.Reliabilities{Sessions: map[int64]float64{}}
	if snap != nil {
		rel.Prior, rel.Correlation = snap.Prior, snap.Correlation
	}
	for _, r := range runs {
		if r.Reliability != nil {
			rel.Sessions[int64(r.SessionID)] = *r.Reliability
		}
		if r.ConfidenceSlope != nil {
			if rel.Confidence == nil {
				rel.Confidence = map[int64]consensus.ConfidenceSlope{}
			}
			rel.Confidence[int64(r.SessionID)] = *r.ConfidenceSlope
		}
	}
	return rel
}

// PluralityReliability is the reliability consensus.PluralityPosteriorAt
// states an open answer at: the mean of the reliabilities of the runs
// that answered, as each run records it (router.Run.Reliability), a run
// that records none read at snap's prior (consensus.DefaultReliability
// when snap names none). Before any outcome every session reads the
// prior's mean, 0.8; outcomes move each to its record.
func PluralityReliability(runs []router.Run, snap *router.ReputationSnapshot) float64 {
	prior := consensus.DefaultReliability
	if snap != nil && snap.Prior > 0 {
		prior = snap.Prior
	}
	sum, n := 0.0, 0
	for _, r := range runs {
		if r.Label != router.LabelOK {
			continue
		}
		rel := prior
		if r.Reliability != nil {
			rel = *r.Reliability
		}
		sum += rel
		n++
	}
	if n == 0 {
		return prior
	}
	return sum / float64(n)
}
