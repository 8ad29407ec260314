// Package routertest provides fake workers and sessions for testing
// programs that use package router, as net/http/httptest does for HTTP.
//
// Each constructor is named for the behaviour of the worker it returns,
// and returns a plain [router.Worker]: [Fixed], [Verdict] and [Answer]
// always give the same result, [Fail] always the same error, [Flaky]
// fails with a seeded error rate and [Mix] picks one of two workers at a
// seeded rate, [Slow] answers after a delay, [Hang]
// answers only when cancelled, [Panic] panics, [Lie] turns another
// worker's answer into a wrong one, and [Sequence] plays a script of
// workers, one per call. A [Recorder] wraps any worker and counts the
// calls, the returns and the cancellations it observed, for a test to
// read. [Sessions] builds router sessions spread over worker pools.
//
// [TestIdempotencyStore] and [TestRateLimiter] are the conformance suites
// of router.IdempotencyStore and router.RateLimiter: a store or limiter
// of a host's own (in Redis, say) runs them from its tests, given two
// handles on one empty store, as two servers sharing it hold; the
// in-memory ones and package pgstore's run them alike.
//
// The workers are deterministic: their only randomness is seeded, and
// their only use of time is the duration given to Slow ([DeadlineOnly],
// which is no worker, reads the clock once). They start no
// goroutines, so there is nothing to close (the suites do, and wait for
// them). The constructors panic on
// misuse (a negative duration, an error rate outside [0, 1], a nil
// worker), as httptest's helpers do.
package routertest

import "errors"

// ErrFlaky is the error of a call that a [Flaky] worker fails.
var ErrFlaky = errors.New("routertest: flaky worker failed")
