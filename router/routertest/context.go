package routertest

import (
	"context"
	"time"
)

// DeadlineOnly returns a context whose deadline is d from now and whose
// Done never closes: a call on it returns by the deadline only if it keeps
// the deadline itself, as a call must to answer before its caller gives
// up, which a test can check without timing the call.
func DeadlineOnly(d time.Duration) context.Context {
	return deadlineOnly{context.Background(), time.Now().Add(d)}
}

type deadlineOnly struct {
	context.Context
	at time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.at, true }
