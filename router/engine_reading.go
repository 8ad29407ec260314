package router

import (
	"context"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// A Reading is what a caller read of a scope's reputation for one call:
// the reliabilities of sessions and the evidence behind each, as
// reputation.Book.Evidence (or reputation.Book.Snapshot) returns them,
// and the calibration map of the engine's weighted calls. See
// [WithReading].
type Reading struct {
	// Scope is the scope read.
	Scope reputation.Scope
	// Reliabilities are the sessions' reliabilities.
	Reliabilities consensus.Reliabilities
	// Evidence holds the evidence behind each session's reliability,
	// one entry per session read.
	Evidence map[int64]reputation.Record
	// Calibration is the scope's map of [CalibrationTier], as
	// reputation.Book.Calibrations (or reputation.Book.Snapshot) returns
	// it; nil when the caller did not read it. The engine then reads a
	// weighted call's confidence on it instead of reading the map.
	Calibration *reputation.Calibration
	// Coincidence is the scope's chance that two wrong answers
	// coincide, as reputation.Book.Coincidence (or Snapshot) returns it;
	// 0 when the caller did not read it. The engine then learns a call
	// of open answers at it (reputation.Book.LearnAt) instead of reading
	// it.
	Coincidence float64
}

// readingKey is the context key of WithReading.
type readingKey struct{}

// WithReading returns a copy of ctx under which the engine orders,
// weighs and records the sessions of a call in r.Scope by r instead of
// reading its book, when r holds the evidence of every session the call
// may run. A caller that makes several router calls for one decision
// and has read the scope once (a trust service) so hands each call what
// it read, and the engine reads nothing more of it. A Reading of another
// scope, or one that lacks a session, is ignored: the engine then reads
// the book as it does without one; so is a Calibration of another tier,
// and the engine then reads its map. The engine still learns from the
// call (see [WithoutLearning]) and calibrates it (see
// [WithoutCalibration]).
func WithReading(ctx context.Context, r Reading) context.Context {
	return context.WithValue(ctx, readingKey{}, r)
}

// scopeKey is the context key of WithScope.
type scopeKey struct{}

// WithScope returns a copy of ctx under which the engine orders, weighs,
// calibrates and learns a delegation in scope when scope is of the
// delegation's operation. A delegation's request names no claim type, so
// the engine's own scope of it is its operation's (see [Scope]); a caller
// that knows the kind of its task (a trust service, from the task's
// type) names it, so that the engine learns in the scope the caller
// ranks sessions and takes reports in. Validations keep their claim
// type's scope. Like WithReading, it reaches an in-process engine only: a
// Client does not send ctx's values.
func WithScope(ctx context.Context, scope reputation.Scope) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope)
}

// scopeFor returns the reputation scope of a call of job under ctx: job's
// own (see [Scope]), or for a delegation the scope WithScope names when it
// is of the delegation's operation.
func scopeFor(ctx context.Context, job *Job) reputation.Scope {
	scope := scopeOf(job)
	if named, ok := ctx.Value(scopeKey{}).(reputation.Scope); ok && job.Kind == KindDelegate && named.Operation == scope.Operation {
		return named
	}
	return scope
}

// reading returns the Reading ctx carries for a call in scope over
// sessions, if it holds every one of them.
func reading(ctx context.Context, scope reputation.Scope, sessions []*session) (Reading, bool) {
	r, ok := ctx.Value(readingKey{}).(Reading)
	if !ok || r.Scope != scope {
		return Reading{}, false
	}
	for _, s := range sessions {
		if _, ok := r.Evidence[int64(s.ID)]; !ok {
			return Reading{}, false
		}
	}
	return r, true
}

// calibratesItselfKey is the context key of WithoutCalibration.
type calibratesItselfKey struct{}

// WithoutCalibration returns a copy of ctx under which the engine states
// a weighted call's confidence as its votes give it (consensus.Weighted),
// reads no calibration map and records no basis: its caller calibrates
// the answer itself, as a trust service's adaptive tier calibrates the
// tally of all its runs on its own maps.
func WithoutCalibration(ctx context.Context) context.Context {
	return context.WithValue(ctx, calibratesItselfKey{}, true)
}
