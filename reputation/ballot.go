package reputation

import "slices"

// A Ballot is one session's part in a call the host reports on.
type Ballot struct {
	// Session is the session that ran.
	Session int64
	// Backed reports whether its vote backed the outcome the call
	// reported.
	Backed bool
	// Confidence is the confidence its vote reported; 0 when none.
	Confidence float64
	// Opposed reports a vote against the outcome that was the one other
	// answer the call could have: a validation's other verdict. When
	// the outcome was wrong, such a vote was right.
	Opposed bool
	// Check reports a vote cast beside the call's outcome without
	// counting in it, to check the session that decided alone (see
	// [Book.Leader]): its report teaches the session's reliability, and
	// no record against the other votes (a [Lead]), its own or the
	// decider's.
	Check bool
	// Taught reports a vote of a session whose reliability learns this
	// claim's outcome from a report on another call (see [Call.Again]):
	// its report teaches the session's reliability nothing more.
	Taught bool
	// Scored reports a vote of a session whose record against the other
	// votes (a [Lead]) a report on another call scores on this claim
	// (see [Call.Again]): its report adds nothing to that record, though
	// the vote counts among the others for the other sessions' records.
	Scored bool
}

// Again returns c, a call that asked the claim of first again, with its
// ballots marked so that a report of the claim's true outcome on both
// calls teaches each session once: a ballot of a session whose vote in
// first is a validation's verdict (Backed or Opposed) is Taught, and
// Scored too when first's report scores that session against its other
// votes (its vote disagrees with their majority). Without the marks a
// session that voted in both would learn the one outcome twice, and a
// disagreement counted twice would make its record against the others
// look significant on half the claims. trust.Service marks so the calls
// that examine a reported claim (Service.FeedbackVerdict).
func (c Call) Again(first Call) Call {
	c.Ballots = slices.Clone(c.Ballots)
	for i := range c.Ballots {
		bl := &c.Ballots[i]
		j := slices.IndexFunc(first.Ballots, func(f Ballot) bool { return f.Session == bl.Session })
		if j < 0 {
			continue
		}
		f := first.Ballots[j]
		if f.Backed || f.Opposed {
			bl.Taught = true
		}
		if _, scored := leadDelta(first.Scope, first.Ballots, j, true, 1); scored {
			bl.Scored = true
		}
	}
	return c
}
