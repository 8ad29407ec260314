package consensus

import "time"

// A Label is the coarse result one replica reports: a verdict for validate
// (VALID, INVALID, and also RETRY or NEEDS_SPEC), TRUE or FALSE for factcheck,
// or a task status for delegate (OK, TIMEOUT, ERROR).
//
// The set is open: any non-empty label is a vote, except the three non-vote
// labels TIMEOUT, ERROR and CANCELLED. The empty label means "no vote yet".
type Label string

// Labels with a fixed meaning to the aggregators.
const (
	LabelValid   Label = "VALID"   // validate: the claim holds
	LabelInvalid Label = "INVALID" // validate: the claim does not hold
	LabelTrue    Label = "TRUE"    // factcheck: the statement is true
	LabelFalse   Label = "FALSE"   // factcheck: the statement is false
	LabelOK      Label = "OK"      // delegate: the task produced an answer

	// LabelTimeout and LabelError mark a replica that failed. Depending on
	// Policy.Failures they are non-votes or negative evidence.
	LabelTimeout Label = "TIMEOUT"
	LabelError   Label = "ERROR"

	// LabelCancelled marks a replica cut short because the outcome no longer
	// depended on it (or the caller gave up). It is always a non-vote and
	// never negative evidence.
	LabelCancelled Label = "CANCELLED"
)

// Failed reports whether l marks a failed replica, that is TIMEOUT or ERROR.
func (l Label) Failed() bool { return l == LabelTimeout || l == LabelError }

// A Vote is what one replica reports.
//
// Two cast votes agree when their labels are equal and their answers are
// equivalent under Policy.Key. Verdict-only votes (validate, factcheck) leave
// Answer nil so that they are grouped by label alone; richer per-replica
// evidence (reasons, steps, scores) belongs to the caller, indexed like the
// votes.
type Vote struct {
	// Session identifies the session that ran the replica.
	Session int64
	// Label is the replica's verdict or status. The empty label means the
	// vote has not arrived yet (see Aggregator.Decided).
	Label Label
	// Answer is a delegate replica's output, compared through Policy.Key.
	Answer any
	// Confidence is the confidence the replica reported in its answer, in
	// [0, 1]; 0 when it reported none. Majority ignores it; Weighted
	// reads it through Reliabilities.Evidence, and Stop's lone-vote rule
	// reads it.
	Confidence float64
	// Latency is how long the replica ran.
	Latency time.Duration
	// Reason is a short explanation, such as the error of a failed replica.
	Reason string
}
