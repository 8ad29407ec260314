package routertest

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/vouchkit/vouch/router"
)

// Recorder is a worker that passes every job to another worker and
// records what happens: a test reads its counters and jobs after (or
// while) the code under test runs. It is safe for concurrent use. Build
// one with [NewRecorder]: the zero Recorder wraps no worker, and its Work
// panics.
type Recorder struct {
	// Calls counts the calls of Work.
	Calls atomic.Int64
	// Returned counts the calls that have returned, by panicking too; a
	// call in progress is counted in Calls but not yet here.
	Returned atomic.Int64
	// Cancelled counts the calls that returned after their context had
	// ended: the cancellations (and deadlines) the worker observed.
	Cancelled atomic.Int64

	w    router.Worker
	mu   sync.Mutex
	jobs []router.Job
}

// NewRecorder returns a Recorder around w. It panics if w is nil.
func NewRecorder(w router.Worker) *Recorder {
	if w == nil {
		panic("routertest: NewRecorder with a nil worker")
	}
	return &Recorder{w: w}
}

// Work records the job, passes it to the wrapped worker, and counts the
// return and whether ctx had ended by then. A panic of the wrapped worker
// is counted and passed on.
func (r *Recorder) Work(ctx context.Context, job *router.Job) (*router.Result, error) {
	r.Calls.Add(1)
	defer func() {
		if ctx.Err() != nil {
			r.Cancelled.Add(1)
		}
		r.Returned.Add(1)
	}()
	r.mu.Lock()
	r.jobs = append(r.jobs, *job)
	r.mu.Unlock()
	return r.w.Work(ctx, job)
}

// Jobs returns a copy of the jobs received so far, in the order they
// arrived. The copies are shallow: their maps and slices are those the
// caller passed.
func (r *Recorder) Jobs() []router.Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]router.Job(nil), r.jobs...)
}
