package trust

import (
	"slices"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// LeaderCalibrationSuffix ends the name of the calibration map of the
// adaptive validations a leader decided alone (see Service.Call):
// "adaptive/VALID/leader", "adaptive/INVALID/leader". One session's
// verdict is right at another rate than a panel's tally of the same
// score, so its outcomes build maps of their own.
const LeaderCalibrationSuffix = "/leader"

// leaderCandidates returns the sessions among cands, not in exclude,
// that may lead an adaptive validation (reputation.Book.Leader, which
// Service.readScope reads with the calibration maps): the most
// reliable session, whose reported outcomes show it right, significantly
// more often, where the majority of the other votes was wrong than the
// reverse. Only a validation (or arbitration) has one: for an open
// answer, a dissent from a wrong outcome is not known to be right, so no
// session's record can lead.
func leaderCandidates(cands []candidate, exclude []router.SessionID) []int64 {
	if len(cands) < 2 {
		return nil // one candidate runs alone anyway
	}
	ids := make([]int64, 0, len(cands))
	for _, c := range cands {
		if c.id != 0 && !slices.Contains(exclude, c.id) {
			ids = append(ids, int64(c.id))
		}
	}
	return ids
}

// leader returns the leader c read, if any; none when c is nil.
func (c *scopeReading) leader() (reputation.Lead, bool) {
	if c == nil {
		return reputation.Lead{}, false
	}
	return c.lead, c.leads
}

// first moves the candidate of session id to the front of cands.
func first(cands []candidate, id router.SessionID) []candidate {
	i := slices.IndexFunc(cands, func(c candidate) bool { return c.id == id })
	if i <= 0 {
		return cands
	}
	return append(append([]candidate{cands[i]}, cands[:i]...), cands[i+1:]...)
}

// ledBy reports whether runs are the lone answer of leader l: one run, on
// the leader's session, that cast a verdict.
func ledBy(l *reputation.Lead, runs []router.Run) bool {
	return l != nil && len(runs) == 1 && int64(runs[0].SessionID) == l.Session &&
		twoVerdicts(consensus.Label(runs[0].Label))
}

// leaderMap returns the calibration map of the verdict label a leader
// gave alone (LeaderCalibrationSuffix), as c read it; nil when c is nil
// or read no leader's maps.
func (c *scopeReading) leaderMap(label consensus.Label) *reputation.Calibration {
	if c == nil || c.leaders == nil {
		return nil
	}
	if i := slices.Index(c.labels, label); i >= 0 {
		return c.leaders[i]
	}
	return nil
}
