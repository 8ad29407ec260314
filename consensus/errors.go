package consensus

import (
	"errors"
	"strings"
)

// Errors returned by this package. They are matched with errors.Is.
var (
	// ErrDisagreement reports that replicas disagreed under FailHard.
	ErrDisagreement = errors.New("consensus: replicas disagree")
	// ErrAllFailed reports that no replica cast a vote under FailHard.
	ErrAllFailed = errors.New("consensus: all replicas failed")
	// ErrNotAvailable reports a strategy named for a later version.
	ErrNotAvailable = errors.New("consensus: strategy not available")
	// ErrInvalid reports bad input: an unknown strategy, policy or failure
	// mode, no votes, an empty label, or an answer Policy.Key rejects.
	ErrInvalid = errors.New("consensus: invalid input")
	// ErrDecided is the cause, as reported by context.Cause, given to
	// replicas that Runner.Run cancels because the outcome is decided.
	ErrDecided = errors.New("consensus: outcome already decided")
	// ErrDeadline is the cause given to replicas still running when the
	// Runner's Timeout passes.
	ErrDeadline = errors.New("consensus: overall deadline passed")
	// ErrNotNumber reports an answer that holds no number (see
	// ParseNumber): under a numeric strategy, a replica that answered it
	// casts no vote.
	ErrNotNumber = errors.New("consensus: not a number")
)

// An OutcomeError is an error that still carries the outcome, with every
// replica's vote. Aggregate returns one under FailHard for a disagreement
// (Err is ErrDisagreement) or when every replica failed (Err is
// ErrAllFailed); Runner.Run also returns one when its context is done before
// the outcome is decided (Err wraps context.Cause of that context).
type OutcomeError struct {
	Outcome Outcome
	Err     error
}

// Error returns Err's message followed by the per-replica verdicts.
func (e *OutcomeError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	b.WriteString(" (verdicts")
	for _, l := range e.Outcome.Verdicts {
		b.WriteByte(' ')
		b.WriteString(string(l))
	}
	b.WriteByte(')')
	return b.String()
}

// Unwrap returns Err.
func (e *OutcomeError) Unwrap() error { return e.Err }
