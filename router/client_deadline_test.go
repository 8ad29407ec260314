package router_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// timeoutOps are the operations whose request has a policy.timeout_ms.
var timeoutOps = []router.Operation{router.OpDelegateV2, router.OpValidateV2, router.OpDelegateV3,
	router.OpValidateV3, router.OpFactcheck, router.OpFactcheckV1}

// timeoutOf returns a pointer to the policy.timeout_ms of req.
func timeoutOf(req any) *int64 {
	switch r := req.(type) {
	case *router.DelegateV2Request:
		return &r.Policy.TimeoutMS
	case *router.DelegateV3Request:
		return &r.Policy.TimeoutMS
	case *router.ValidateV2Request:
		return &r.Policy.TimeoutMS
	case *router.ValidateV3Request:
		return &r.Policy.TimeoutMS
	case *router.FactcheckRequest:
		return &r.Policy.TimeoutMS
	case *router.FactcheckV1Request:
		return &r.Policy.TimeoutMS
	}
	panic("no policy.timeout_ms")
}

// TestClient_deadlineTimeout: a call whose context has a deadline sends
// the time left, less the Client's reserve, as policy.timeout_ms, unless
// the request set a shorter one; the server takes it.
func TestClient_deadlineTimeout(t *testing.T) {
	svc := &fakeService{}
	srv := newTestServer(t, svc)
	c := newTestClient(t, srv.URL)
	const hour = 3_600_000 // the largest policy.timeout_ms the server takes
	tests := []struct {
		name     string
		deadline time.Duration // 0: none
		set      int64
		key      string
		// the timeout sent is in [min, max]
		min, max int64
	}{
		{name: "no deadline", set: 0, min: 0, max: 0},
		{name: "no deadline, set", set: 1500, min: 1500, max: 1500},
		{name: "deadline", deadline: 10 * time.Second, min: 1, max: 9750},
		{name: "deadline, shorter set", deadline: 10 * time.Second, set: 1500, min: 1500, max: 1500},
		{name: "deadline, longer set", deadline: 10 * time.Second, set: hour, min: 1, max: 9750},
		{name: "deadline past the bound", deadline: 2 * time.Hour, min: hour, max: hour},
		{name: "idempotency key", deadline: 10 * time.Second, key: "idem-deadline", min: 0, max: 0},
	}
	for _, op := range timeoutOps {
		for _, tt := range tests {
			ctx := t.Context()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			if tt.key != "" {
				ctx = router.WithIdempotencyKey(ctx, tt.key+"-"+string(op))
			}
			req := requestFor(op)
			*timeoutOf(req) = tt.set
			if _, err := callOpWith(ctx, c, req); err != nil {
				t.Errorf("%s, %s: %v", op, tt.name, err)
				continue
			}
			svc.mu.Lock()
			got := *timeoutOf(svc.lastReq)
			svc.mu.Unlock()
			if got < tt.min || got > tt.max {
				t.Errorf("%s, %s: sent timeout_ms %d, want it in [%d, %d]", op, tt.name, got, tt.min, tt.max)
			}
			if *timeoutOf(req) != tt.set {
				t.Errorf("%s, %s: the caller's request now has timeout_ms %d, want %d as set", op, tt.name, *timeoutOf(req), tt.set)
			}
		}
	}
}

// TestClient_deadlineTooClose: a call whose deadline leaves less than the
// wire's least timeout (1 ms) after the Client's reserve fails at once
// with context.DeadlineExceeded, sending nothing.
func TestClient_deadlineTooClose(t *testing.T) {
	svc := &fakeService{}
	srv := newTestServer(t, svc)
	c := newTestClient(t, srv.URL)
	for _, op := range timeoutOps {
		_, err := callOpWith(routertest.DeadlineOnly(500*time.Microsecond), c, requestFor(op))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v, want context.DeadlineExceeded", op, err)
		}
	}
	if diff := cmp.Diff(int64(0), svc.calls.Load()); diff != "" {
		t.Errorf("calls the server got (-want +got):\n%s", diff)
	}
}

// callOpWith calls the operation of req on svc.
func callOpWith(ctx context.Context, svc router.Service, req any) (any, error) {
	switch r := req.(type) {
	case *router.DelegateV2Request:
		return svc.DelegateV2(ctx, r)
	case *router.ValidateV2Request:
		return svc.ValidateV2(ctx, r)
	case *router.DelegateV3Request:
		return svc.DelegateV3(ctx, r)
	case *router.ValidateV3Request:
		return svc.ValidateV3(ctx, r)
	case *router.FactcheckRequest:
		return svc.Factcheck(ctx, r)
	case *router.FactcheckV1Request:
		return svc.FactcheckV1(ctx, r)
	}
	panic("unknown request")
}
