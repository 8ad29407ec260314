// Package decide holds the rules a trust call decides by, as pure
// functions of the runs it made and the calibration maps it read of its
// scope: how the runs count as votes, which tier accepts a winner, when
// adaptive stops and how many runs it launches next, the confidence a
// tally states on its map, and the plurality rule of adaptive
// delegations. Package trust reads its scope once, runs the call, asks
// [Rules.Decide] once and tells the answer; nothing here reads a store
// or runs a session.
package decide

import (
	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// A Tier names the trust tier a call runs at, as the trust envelope
// spells it.
type Tier string

// The tiers.
const (
	Fast     Tier = "fast"
	Safe     Tier = "safe"
	Oracle   Tier = "oracle"
	Adaptive Tier = "adaptive"
)

// NumericSuffix ends the name of the calibration map of the delegations
// that declare a numeric answer: "safe/number".
const NumericSuffix = "/number"

// LeaderSuffix ends the name of the calibration map of the verdicts a
// leader gives alone: "adaptive/VALID/leader".
const LeaderSuffix = "/leader"

// Rules are what decides the calls of one request: its tier and kind, and
// the service's settings. The zero value of each setting is the rule
// without it.
type Rules struct {
	// Tier is the call's tier.
	Tier Tier
	// Delegation reports a delegation; a validation otherwise.
	Delegation bool
	// Numeric reports a delegation that declares a numeric answer,
	// counted by its median, unweighted, with answers within Tolerance
	// of it agreeing.
	Numeric   bool
	Tolerance consensus.Tolerance
	// Judged reports a delegation whose answers a judge compares.
	Judged bool
	// Calibrated reports that reputation is on: tallies are weighted and
	// their confidence read on calibration maps.
	Calibrated bool
	// Lone is the escalation threshold: the confidence at which one
	// answer settles an adaptive call alone (consensus.Stop.Lone).
	Lone float64
	// Threshold and Flip are the stop's calibrated threshold and its
	// bound on the chance that the runs left turn the verdict
	// (consensus.Stop), when Calibrated.
	Threshold, Flip float64
	// Floor is the confidence an adaptive delegation's plurality must
	// state, above it, to answer VALID.
	Floor float64
}

// ByPlurality reports whether the call is decided by the plurality
// rule: an adaptive delegation that is not judged.
func (r Rules) ByPlurality() bool {
	return r.Delegation && r.Tier == Adaptive && !r.Judged
}

// Open reports whether the call delegates an open answer, whose groups
// of equal answers state its confidence (consensus.PluralityPosteriorAt):
// a delegation that declares no numeric answer and is not judged.
func (r Rules) Open() bool {
	return r.Delegation && !r.Numeric && !r.Judged
}

// CalibrationTier names the calibration map of the calls that settle on
// label: for a validation "<tier>/<label>" (one map per verdict), for a
// delegation its tier, with NumericSuffix when it declares a numeric
// answer.
func (r Rules) CalibrationTier(label consensus.Label) string {
	switch {
	case !r.Delegation && label != "":
		return string(r.Tier) + "/" + string(label)
	case r.Numeric:
		return string(r.Tier) + NumericSuffix
	}
	return string(r.Tier)
}

// Score returns the input of the calibration maps of a call whose
// outcome states confidence x and conservative number c: for a
// validation x, the weighted credence of its winner, which tells the
// sessions apart; for a delegation c, the number its plurality rule
// compares.
func (r Rules) Score(x, c float64) float64 {
	if r.Delegation {
		return c
	}
	return x
}

// Accepts reports whether the tier may report the winner of out, read
// on cal (nil: no map):
//
//	fast      a winner (one answer)
//	safe      a strict majority of at least two answers (Decides also
//	          takes a calibrated weighted winner above one half)
//	oracle    a majority of the replicas launched answered, and none
//	          dissented
//	adaptive  consensus.Stop's Accept: settled, or once no run is left a
//	          strict majority of at least two answers or (weighted) a
//	          winner of at least two whose confidence is above one half
func (r Rules) Accepts(out consensus.Outcome, cal *reputation.Calibration) bool {
	if out.Replicas == 0 || out.Winner < 0 || out.Agreeing == 0 {
		return false
	}
	switch r.Tier {
	case Fast:
		return out.Agreeing > out.Against
	case Safe:
		return out.Agreeing >= 2 && out.Agreeing > out.Against
	case Oracle:
		return out.Against == 0 && 2*out.Agreeing > out.Replicas
	}
	return r.Stop(cal).Accept(out)
}

// Decides reports whether the tier accepts the winner of out, the tally
// of a finished call stating confidence: as Accepts does, but for a call
// decided by the plurality rule (ByPlurality), and for safe's weighted
// tally when Calibrated (WeighsWinner).
//
// Where WeighsWinner, it also accepts a weighted winner that Accepts
// does not (one session that outweighs two that agree, or the most
// reliable of three different answers) when confidence, its calibrated
// reading, is above one half: the reported outcomes then show such a
// winner right more often than not, and answering RETRY would discard
// the answer they back. Before any outcome the calibrated confidence is
// the conservative number, above one half only for a strict majority of
// the answers, so the rule is then Accepts'.
//
// A call decided by the plurality rule is taken once adaptive has
// stopped, so out then holds every run the call made:
//
//	one answer  accepted when the stop settles it alone (Lone); not else
//	otherwise   accepted when at least two runs back the winner and
//	            confidence is above Floor; not else
//
// Not Calibrated, the confidence is consensus.Posterior, above one half
// exactly when the winner holds a strict majority of the answers, so that
// the rule is then the strict majority of at least two that Accepts
// states. Calibrated, it is the calibrated confidence of the plurality
// (recount): a plurality short of a majority is accepted once the
// outcomes reported show such answers right more often than not, and a
// majority or a settled winner that they show wrong more often than not
// is not.
func (r Rules) Decides(out consensus.Outcome, cal *reputation.Calibration, confidence float64) bool {
	if !r.ByPlurality() {
		if r.WeighsWinner(out) && out.Winner >= 0 && out.Agreeing > 0 && confidence > 0.5 {
			return true
		}
		return r.Accepts(out, cal)
	}
	if out.Replicas == 0 || out.Winner < 0 || out.Agreeing == 0 {
		return false
	}
	if out.Agreeing == 1 {
		return r.Stop(cal).Settled(out)
	}
	return confidence > r.Floor
}

// WeighsWinner reports whether Decides may accept out's weighted winner
// on its calibrated confidence, though fewer than two answers back it:
// safe's weighted tally, when Calibrated, of at least two answers or of
// runs the router cancelled once the weights settled the call. One
// answer whose other runs failed is not weighed against anything, and
// is left to Accepts, as reputation off leaves it.
func (r Rules) WeighsWinner(out consensus.Outcome) bool {
	return r.Tier == Safe && r.Calibrated && out.Strategy == consensus.StrategyWeighted &&
		(out.Answered >= 2 || out.Cancelled > 0)
}

// Stop is adaptive's stopping rule on cal: consensus.Stop with Lone, and
// when Calibrated (but for a numeric delegation, counted unweighted)
// Threshold on the calibrated confidence (cal's reading of the call's
// Score once cal holds outcomes; before, the conservative number, what
// the call states then: a stop on the weighted confidence would trust
// the reliabilities' prior as if outcomes had shown it, and stop earlier
// than reputation off does on the same votes) or Flip on the chance that
// the runs left turn the verdict.
func (r Rules) Stop(cal *reputation.Calibration) consensus.Stop {
	st := consensus.Stop{Lone: r.Lone}
	if r.Calibrated && !r.Numeric {
		st.Threshold, st.Flip = r.Threshold, r.Flip
		st.Calibrate = conservative
		if cal != nil && cal.Total() > 0 {
			st.Calibrate = func(x, c float64) float64 {
				y, _ := r.read(cal, r.Score(x, c), c)
				return y
			}
		}
	}
	return st
}

// loneVote returns the confidence the one answer of out reported, and
// true, when the escalation threshold is set and out, the tally of an
// adaptive call, holds one answer and none against it: the tally Stop
// settles alone exactly when that confidence is at least Lone. It
// returns false otherwise.
func (r Rules) loneVote(out consensus.Outcome) (float64, bool) {
	if r.Tier != Adaptive || r.Lone <= 0 || out.Agreeing != 1 || out.Against != 0 || out.Winner < 0 || out.Winner >= len(out.Votes) {
		return 0, false
	}
	return out.Votes[out.Winner].Confidence, true
}

// read returns the confidence cal states for a call of score x and
// conservative number c, and its basis: an open answer's is held below
// the map's lowest point (reputation.Calibration.HeldBasis), as its
// count, the map's input, says less there than the plurality's
// posterior; any other call's is the map's reading (Basis). Adaptive's
// stop and the number stated read alike.
func (r Rules) read(cal *reputation.Calibration, x, c float64) (float64, reputation.Basis) {
	if r.Open() {
		return cal.HeldBasis(x, c)
	}
	return cal.Basis(x, c)
}

// conservative reads a call's conservative number as its confidence
// (consensus.Stop.Calibrate), as a calibration map of no outcome does.
func conservative(_, c float64) float64 { return c }

// StopAfter is the stopping rule (Stop) after out, on the map of out's
// winner in m, or before any vote of a validation on the lower of the
// verdicts' maps (Maps.Lower).
func (r Rules) StopAfter(m *Maps, out consensus.Outcome) consensus.Stop {
	st := r.Stop(m.For(out))
	if st.Threshold != 0 && m != nil && m.Labels != nil && (out.Winner < 0 || out.Agreeing == 0) {
		st.Calibrate = m.Lower()
	}
	return st
}

// Next is adaptive's count of further runs after out under st: the
// stop's (consensus.Stop.Next), except that a call runs once more while
// runs are left, though the stop would settle it, when its answer would
// not stand: a call decided by the plurality rule whose winner holds no
// strict majority of the answers (the chance that the runs left turn a
// tie of two and two is small when the next session weighs little, yet
// one more run breaks the tie: the plurality rule states such a winner's
// confidence, which is then at most one half, and does not accept it),
// and any other call whose tally the stop settles on the next session's
// weight but the tally's acceptance, which weighs no next session,
// refuses (a weighted tie whose calibrated confidence is one half or
// below).
func (r Rules) Next(st consensus.Stop, out consensus.Outcome) int {
	k := st.Next(out)
	max := st.Max
	if max == 0 {
		max = consensus.DefaultMaxRuns
	}
	if k == 0 && out.Replicas < max && out.Winner >= 0 {
		if r.ByPlurality() {
			if out.Agreeing <= out.Against {
				return 1
			}
			return 0
		}
		// The tally accepts on the stop without the next session's weight.
		accept := st
		accept.Weight = 0
		if !accept.Accept(out) {
			return 1
		}
	}
	return k
}
