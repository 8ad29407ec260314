package decide

import (
	"slices"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// A Tally is what a finished call ran, for Decide.
type Tally struct {
	// Runs are every run the call counts.
	Runs []router.Run
	// Snapshot is the reputation snapshot of the call's latest router
	// call that has one; nil when none has.
	Snapshot *router.ReputationSnapshot
	// Key groups the answers of a delegation (nil: consensus.DefaultKey).
	Key func(any) (string, error)
	// Led reports that a leader's one verdict decided the call.
	Led bool
}

// A Decision is what a finished call states.
type Decision struct {
	// Out is the tally the call answers: the runs' Count, or their count
	// again by runs when Recounted.
	Out consensus.Outcome
	// Recounted reports that the plurality rule counted the answers
	// again by runs.
	Recounted bool
	// Confidence is the confidence stated: Out's own, or with the rules
	// Calibrated its reading on the call's map, whose basis is Basis.
	Confidence float64
	// Basis is the calibration basis of Confidence; nil when uncalibrated.
	Basis *reputation.Basis
	// Groups holds the sizes of the groups of equal answers an open
	// answer's plurality was stated from, the winner's first; nil when
	// none was.
	Groups []int
	// Coincidence and Reliability are the chance that two wrong answers
	// coincide (Maps.Coincidence) and the runs' reliability
	// (PluralityReliability) that an open answer's plurality was stated
	// at.
	Coincidence, Reliability float64
	// Accepted reports whether the tier accepts the winner.
	Accepted bool
	// Dissent is, when the dissent rule decided the call (Rules.Dissent),
	// the record of the session whose lone verdict it answers; nil
	// otherwise.
	Dissent *reputation.Lead
	// Lone is, when the escalation threshold is set (Rules.Lone) and an
	// adaptive call that no leader decided ended on one answer with
	// none against it, the confidence that answer reported: the stop
	// settles such a call alone, and the call is accepted, exactly when
	// it is at least Rules.Lone (consensus.Stop.Lone). Nil otherwise.
	Lone *float64
}

// Decide returns what a finished call that ran t states, on the maps m
// it read: the runs' Count, and what the rules make of it. A call decided by the plurality rule is counted again
// by runs unless its weighted tally settles it (recount). With the rules
// Calibrated, a weighted tally, a recount or a numeric delegation states
// its consensus.Conservative number, or the Score the map reads, as its
// map (a leader's map when Led; an uncalibrated one named by
// CalibrationTier when m holds none) reads it; an open answer's
// weighted winner states at most its consensus.PluralityPosteriorAt.
// A leader's verdict is accepted; a lone dissent whose record qualifies
// (Dissent) is answered, stating its record's Rate uncalibrated; any
// other tally is accepted as Decides says.
func (r Rules) Decide(m *Maps, t Tally) (Decision, error) {
	counted, err := r.Count(t.Runs, t.Snapshot, t.Key)
	if err != nil {
		return Decision{}, err
	}
	coincide, reliability := m.Coincidence(), PluralityReliability(t.Runs, t.Snapshot)
	out, recounted, err := r.recount(counted, t.Key, m.For(counted), coincide, reliability)
	if err != nil {
		return Decision{}, counting(err)
	}
	d := Decision{Out: out, Recounted: recounted, Confidence: out.Confidence, Coincidence: coincide, Reliability: reliability}
	cal := m.For(out)
	if t.Led {
		cal = m.Leader(out.Label)
	}
	if r.Calibrated && (out.Strategy == consensus.StrategyWeighted || recounted || r.Numeric) && out.Winner >= 0 {
		if cal == nil { // no map read: uncalibrated
			cal = &reputation.Calibration{Tier: r.CalibrationTier(out.Label)}
			if t.Led {
				cal.Tier += LeaderSuffix
			}
		}
		c := consensus.Conservative(out)
		x := r.Score(out.Confidence, c)
		// An open answer states the PluralityPosteriorAt of its groups
		// with no outcome; the map reads its counts, as the stop does.
		groups, _ := pluralityGroups(out, t.Key) // it counted: no error
		plural := r.Open() && out.Answered > 0 && len(groups) > 0
		switch {
		case recounted:
			x = consensus.Posterior(out.Agreeing, out.Against)
		case plural && out.Strategy == consensus.StrategyWeighted:
			c = min(out.Confidence, consensus.PluralityPosteriorAt(groups, 0, coincide, reliability))
		}
		if plural && (recounted || out.Strategy == consensus.StrategyWeighted) {
			d.Groups = groups
		}
		y, basis := r.read(cal, x, c)
		d.Confidence, d.Basis = y, &basis
	}
	d.Accepted = t.Led || r.Decides(out, cal, d.Confidence)
	if c, ok := r.loneVote(out); ok && !t.Led {
		d.Lone = &c
	}
	if t.Led || m == nil {
		return d, nil
	}
	if i, lead, ok := r.Dissent(out, m.Records); ok {
		d.Out = dissented(out, i)
		d.Confidence, d.Basis, d.Accepted, d.Dissent = lead.Rate(), nil, true, &lead
	}
	return d, nil
}

// recount returns the weighted tally out of a call decided by the
// plurality rule counted again by runs (consensus.Majority over the same
// votes), and true, unless the weighted tally settles the call on its
// confidence: its calibrated conservative number (as cal maps it and the
// call would state it, held below the map's lowest point: Rules.read;
// consensus.Conservative before any outcome) reaches Threshold. Otherwise
// out is returned unchanged, with false.
//
// Weights learned from agreement rank the sessions and let adaptive stop
// early, but on real panels they can let one session outweigh several
// that agree (a session run only on the problems the others split on
// learns a low reliability), and their confidence then says little. Once
// the weights do not settle the call, the panel's best answer is the one
// most of its runs gave, stated with the calibrated Posterior of its
// counts (an open answer's map centred on consensus.PluralityPosteriorAt
// of its groups at coincide and reliability); a tie for the most runs
// keeps the weighted winner.
func (r Rules) recount(out consensus.Outcome, key func(any) (string, error), cal *reputation.Calibration, coincide, reliability float64) (consensus.Outcome, bool, error) {
	if !r.ByPlurality() || out.Strategy != consensus.StrategyWeighted || out.Winner < 0 {
		return out, false, nil
	}
	if cal == nil {
		cal = &reputation.Calibration{}
	}
	c := consensus.Conservative(out)
	if y, _ := r.read(cal, c, c); y >= r.Threshold {
		return out, false, nil
	}
	m, err := consensus.Majority{}.Aggregate(out.Votes, consensus.Policy{Key: key})
	if err != nil || m.Winner < 0 || m.Agreeing < out.Agreeing {
		return out, false, err
	}
	if m.Agreeing == out.Agreeing { // a tie for the most runs: the weighted winner
		m.Winner, m.Answer, m.Label = out.Winner, out.Answer, out.Label
	}
	if groups, err := pluralityGroups(m, key); err != nil {
		return out, false, err
	} else if len(groups) > 0 {
		m.Confidence = consensus.PluralityPosteriorAt(groups, 0, coincide, reliability)
	}
	return m, true, nil
}

// pluralityGroups returns the sizes of the groups of equal answers
// among out's cast votes under key (nil: consensus.DefaultKey), the
// winner's group first; nil when out has no winner among them.
func pluralityGroups(out consensus.Outcome, key func(any) (string, error)) ([]int, error) {
	if key == nil {
		key = consensus.DefaultKey
	}
	var names []string
	var groups []int
	winner := -1
	for i, v := range out.Votes {
		if v.Answer == nil || v.Label == consensus.LabelCancelled || v.Label.Failed() {
			continue
		}
		k, err := key(v.Answer)
		if err != nil {
			return nil, err
		}
		j := slices.Index(names, k)
		if j < 0 {
			names, groups, j = append(names, k), append(groups, 0), len(names)
		}
		groups[j]++
		if i == out.Winner {
			winner = j
		}
	}
	if winner < 0 {
		return nil, nil
	}
	groups[0], groups[winner] = groups[winner], groups[0]
	return groups, nil
}
