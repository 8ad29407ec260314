package trust

import (
	"context"
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

// leader returns the candidate among cands, not in exclude, that leads
// in req's scope (reputation.Book.Leader): the most reliable session,
// whose reported outcomes show it right, significantly more often,
// where the majority of the other votes was wrong than the reverse.
// Only a validation (or arbitration) has one: for an open answer, a
// dissent from a wrong outcome is not known to be right, so no
// session's record can lead.
func (s *Service) leader(ctx context.Context, req *Request, cands []candidate, exclude []router.SessionID) (reputation.Lead, bool) {
	if s.keep == nil || req.Mode == ModeDelegation || len(cands) < 2 {
		return reputation.Lead{}, false
	}
	ids := make([]int64, 0, len(cands))
	for _, c := range cands {
		if c.id != 0 && !slices.Contains(exclude, c.id) {
			ids = append(ids, int64(c.id))
		}
	}
	l, ok, err := s.keep.Reputation().Leader(ctx, scope(req), ids)
	if err != nil {
		s.logger.WarnContext(ctx, "trust: reading the sessions' records against the other votes; no leader", "error", err)
		return reputation.Lead{}, false
	}
	return l, ok
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

// leaderCalibration reads the calibration map of the verdict label a
// leader gave alone in req's scope (LeaderCalibrationSuffix); nil when
// the store fails (logged).
func (s *Service) leaderCalibration(ctx context.Context, req *Request, label consensus.Label) *reputation.Calibration {
	maps, err := s.keep.Reputation().Calibrations(ctx, scope(req), calibrationTier(req, label)+LeaderCalibrationSuffix)
	if err != nil {
		s.logger.WarnContext(ctx, "trust: reading the leader's calibration map; the confidence is uncalibrated", "error", err)
		return nil
	}
	return maps[0]
}
