package trust

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// callerReserve is how close to the caller's deadline adaptive launches
// no more runs: router.Engine cuts its runs short that long (at most)
// before the deadline, to answer in time, so a run launched later could
// only TIMEOUT.
const callerReserve = 100 * time.Millisecond

// outOfTime reports whether ctx's deadline has passed or is less than
// callerReserve away. A cancelled ctx is not out of time: its caller left,
// and the call ends with cancelled's error rather than answer from the
// votes in.
func outOfTime(ctx context.Context) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && time.Until(d) < callerReserve
}

// cancelled returns ctx's error when its caller cancelled it (not when its
// deadline passed), and nil otherwise: a cancelled call returns it, never
// an answer from the runs it had.
func cancelled(ctx context.Context) error {
	if err := ctx.Err(); errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// answeredAny reports whether a run answered: a vote, not a failure.
func answeredAny(runs []router.Run) bool {
	for _, r := range runs {
		if r.Label != "" && r.Label != router.LabelCancelled && r.Label != router.LabelError && r.Label != router.LabelTimeout {
			return true
		}
	}
	return false
}

// noVoteBy returns noVoteInTime's error when the caller's deadline has
// (all but) come and no run of steps answered, and nil otherwise.
func noVoteBy(ctx context.Context, steps []stepResult) error {
	if !outOfTime(ctx) {
		return nil
	}
	var runs []router.Run
	for _, st := range steps {
		runs = append(runs, st.runs...)
	}
	if answeredAny(runs) {
		return nil
	}
	return noVoteInTime(runs)
}

// noVoteInTime is the error of a call whose caller's deadline came
// before any of its runs answered.
func noVoteInTime(runs []router.Run) *Error {
	return problem.Newf(http.StatusGatewayTimeout, problem.CodeTimeout,
		"trust: no run answered before the caller's deadline (%d launched)", len(runs))
}
