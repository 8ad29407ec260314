package router

import (
	"context"
	"time"
)

// clientReserve bounds the time a [Client] keeps, before the caller's
// deadline, for the round trip and the server's answer: a tenth of the
// time left, at most clientReserve.
const clientReserve = 250 * time.Millisecond

// maxTimeoutMS is the largest policy.timeout_ms a server takes (one hour).
const maxTimeoutMS = 3_600_000

// deadlineTimeout returns the policy.timeout_ms of a call under ctx whose
// request set timeout (0 for none): the time left before ctx's deadline,
// less the Client's reserve (see clientReserve) and at most an hour, when
// that is shorter than timeout; timeout otherwise. It fails with
// context.DeadlineExceeded, or ctx's error, when the deadline leaves less
// than the least timeout the wire takes, 1 ms: the server could not
// answer in time.
func deadlineTimeout(ctx context.Context, timeout int64) (int64, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return timeout, nil
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	left := time.Until(deadline)
	ms := min((left - min(left/10, clientReserve)).Milliseconds(), maxTimeoutMS)
	if ms < 1 {
		return 0, context.DeadlineExceeded
	}
	if timeout > 0 && timeout <= ms {
		return timeout, nil
	}
	return ms, nil
}

// withDeadline returns req with its policy.timeout_ms, at timeoutMS(req),
// bounded by ctx's deadline (see deadlineTimeout): req itself when the
// bound changes nothing, else a shallow copy, so that the caller's request
// is never modified. A call with the caller's own Idempotency-Key
// ([WithIdempotencyKey]) is sent as it is: a repeat of it under another
// deadline would be another body, which a server refuses (422) rather
// than answering with the first result.
func withDeadline[Req any](ctx context.Context, req *Req, timeoutMS func(*Req) *int64) (*Req, error) {
	if timeoutMS == nil || idempotencyKeyFrom(ctx) != "" {
		return req, nil
	}
	set := *timeoutMS(req)
	ms, err := deadlineTimeout(ctx, set)
	if err != nil || ms == set {
		return req, err
	}
	bounded := *req
	*timeoutMS(&bounded) = ms
	return &bounded, nil
}
