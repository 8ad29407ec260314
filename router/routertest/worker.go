package routertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/vouchkit/vouch/router"
)

// Fixed returns a worker that answers every job with a copy of res. The
// copy is shallow: the slices and output of res are shared by every
// answer, and must not be modified while the worker is in use.
func Fixed(res router.Result) router.Worker {
	return router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		r := res
		return &r, nil
	})
}

// Verdict returns a worker that answers every job with verdict v, a
// confidence of 1 and one reason naming the verdict. It suits validate
// (VALID, INVALID, RETRY, NEEDS_SPEC) and factcheck (TRUE, FALSE) jobs;
// the engine records a delegate job answered by it as ERROR, since it
// gives no output.
func Verdict(v router.Verdict) router.Worker {
	return Fixed(router.Result{Verdict: v, Confidence: 1, Reasons: []string{"routertest: always " + string(v)}})
}

// Answer returns a worker that answers every job with output, one step
// and a confidence of 1. It suits delegate jobs; output must be a value
// encoding/json can encode, or the engine records an ERROR.
func Answer(output any) router.Worker {
	return Fixed(router.Result{
		Output:     output,
		Confidence: 1,
		Steps:      []router.Step{{Description: "routertest: answer"}},
	})
}

// Fail returns a worker that fails every job with err. It panics if err
// is nil.
func Fail(err error) router.Worker {
	if err == nil {
		panic("routertest: Fail with a nil error")
	}
	return router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		return nil, err
	})
}

// Flaky returns a worker that fails a call with [ErrFlaky] at the given
// rate and passes the others to w: Mix(w, Fail(ErrFlaky), rate, seed).
// Flaky panics if w is nil or rate is outside [0, 1].
func Flaky(w router.Worker, rate float64, seed uint64) router.Worker {
	if w == nil {
		panic("routertest: Flaky with a nil worker")
	}
	return Mix(w, Fail(ErrFlaky), rate, seed)
}

// Mix returns a worker that passes a call to bad at the given rate and to
// good otherwise. The choices follow a pseudo-random sequence fixed by
// seed: the n-th call goes to bad or not whatever the time, so a test that
// makes its calls in a fixed order sees the same choices on every run.
// Mix(w, Lie(w), 0.2, seed), for one, gives a wrong answer one time in
// five. Mix panics if a worker is nil or rate is outside [0, 1].
func Mix(good, bad router.Worker, rate float64, seed uint64) router.Worker {
	if good == nil || bad == nil {
		panic("routertest: Mix with a nil worker")
	}
	if !(rate >= 0 && rate <= 1) {
		panic(fmt.Sprintf("routertest: error rate %v is outside [0, 1]", rate))
	}
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		mu.Lock()
		w := good
		if rng.Float64() < rate {
			w = bad
		}
		mu.Unlock()
		return w.Work(ctx, job)
	})
}

// Slow returns a worker that waits d, then passes the job to w. If the
// job's context ends first, it returns at once with the context's cause,
// as a worker honouring cancellation does. Slow panics if w is nil or d
// is negative.
func Slow(w router.Worker, d time.Duration) router.Worker {
	if w == nil {
		panic("routertest: Slow with a nil worker")
	}
	if d < 0 {
		panic(fmt.Sprintf("routertest: Slow with a negative duration %v", d))
	}
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		if ctx.Err() != nil { // a context ended before the call ended first, whatever d
			return nil, context.Cause(ctx)
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return w.Work(ctx, job)
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	})
}

// Hang returns a worker that never answers: it blocks until the job's
// context ends, then returns the context's cause.
func Hang() router.Worker {
	return router.WorkerFunc(func(ctx context.Context, _ *router.Job) (*router.Result, error) {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	})
}

// Panic returns a worker that panics with v on every call.
func Panic(v any) router.Worker {
	return router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		panic(v)
	})
}

// Lie returns a worker that passes the job to w and turns its answer into
// a wrong one: VALID and INVALID swap, as do TRUE and FALSE; RETRY and
// NEEDS_SPEC become VALID; a delegation's output x becomes {"lie": x},
// which no honest output equals. Errors pass through unchanged. Lie
// panics if w is nil.
func Lie(w router.Worker) router.Worker {
	if w == nil {
		panic("routertest: Lie with a nil worker")
	}
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		res, err := w.Work(ctx, job)
		if err != nil || res == nil {
			return res, err
		}
		r := *res
		switch r.Verdict {
		case router.VerdictValid:
			r.Verdict = router.VerdictInvalid
		case router.VerdictInvalid, router.VerdictRetry, router.VerdictNeedsSpec:
			r.Verdict = router.VerdictValid
		case router.VerdictTrue:
			r.Verdict = router.VerdictFalse
		case router.VerdictFalse:
			r.Verdict = router.VerdictTrue
		}
		if job.Kind == router.KindDelegate {
			r.Output = map[string]any{"lie": r.Output}
		}
		return &r, nil
	})
}

// Sequence returns a worker that passes its n-th call to ws[n], counting
// from 0, and every call after the last to the last worker. Calls are
// numbered in the order they reach the worker. Sequence panics if ws is
// empty or holds a nil worker.
func Sequence(ws ...router.Worker) router.Worker {
	if len(ws) == 0 {
		panic("routertest: Sequence with no workers")
	}
	if slices.Contains(ws, nil) {
		panic("routertest: Sequence with a nil worker")
	}
	ws = slices.Clone(ws)
	var mu sync.Mutex
	n := 0
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		mu.Lock()
		w := ws[min(n, len(ws)-1)]
		n++
		mu.Unlock()
		return w.Work(ctx, job)
	})
}
