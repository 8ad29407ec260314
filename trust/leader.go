package trust

import (
	"fmt"
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

// DefaultLeaderCheckEvery is how often an adaptive call that a leader
// decides alone also runs a check beside it, unless WithLeaderCheck says
// otherwise: one such call in four.
const DefaultLeaderCheckEvery = 4

// WithLeaderCheck sets how often an adaptive validation that a leader
// decides alone (reputation.Book.Leader) also runs one other session
// beside it, the next one selection ranks: one such call in every (0
// never; the default is DefaultLeaderCheckEvery). The verdict stays the
// leader's, and the check's vote is not counted in it: the response
// shows it as a step of its own (Step.Check, Evidence.Checked), the
// caller is not charged for it (Evidence.Launched leaves it out), and
// the receipt, which records the runs the verdict counts, leaves it out
// too. When the caller reports the call's outcome by its trace id, the
// check teaches its session's reliability (reputation.Ballot.Check); a
// report by the receipt, which does not record the check, made first on
// a server that does not remember the call, teaches the counted runs
// alone. Either way the call's outcome counts once.
//
// Without checks, a leader's calls run no other session, so the others'
// records stop moving, and a session that led by luck early on leads
// for good. With them, a session whose outcomes come to rank it above
// the leader ends the lead (Book.Leader asks that no session be more
// reliable than the leader). A check costs one run in every on the calls
// a leader decides (1.25 runs per call at the default, not 1).
func WithLeaderCheck(every int) Option {
	return func(s *Service) error {
		if every < 0 {
			return fmt.Errorf("trust: leader check every %d calls: must be at least 0", every)
		}
		s.check = every
		return nil
	}
}

// checking reports whether the adaptive call a leader is about to decide
// runs a check beside it: one such call in every s.check (WithLeaderCheck).
func (s *Service) checking() bool {
	return s.check > 0 && s.led.Add(1)%uint64(s.check) == 0
}

// checkBallots appends to ballots those of the verdicts cast in the
// leader's checks among steps (Step.Check), as they stood against label,
// the leader's verdict.
func checkBallots(ballots []reputation.Ballot, steps []stepResult, label consensus.Label) []reputation.Ballot {
	for _, st := range steps {
		if !st.step.Check {
			continue
		}
		for _, r := range st.runs {
			if l := consensus.Label(r.Label); twoVerdicts(l) && twoVerdicts(label) {
				ballots = append(ballots, reputation.Ballot{Session: int64(r.SessionID), Backed: l == label, Opposed: l != label, Confidence: r.Confidence, Check: true})
			}
		}
	}
	return ballots
}

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
