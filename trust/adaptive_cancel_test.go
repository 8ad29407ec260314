package trust_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_Call_adaptiveCallerCancels: an adaptive call whose caller
// gives up while its first runs wait on workers that never answer
// returns the context's error, once every run it started has returned.
func TestService_Call_adaptiveCallerCancels(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	recs := []*routertest.Recorder{
		routertest.NewRecorder(routertest.Hang()),
		routertest.NewRecorder(routertest.Hang()),
		routertest.NewRecorder(routertest.Hang()),
	}
	e, err := router.NewEngine(routertest.Sessions(1, 3, recs[0], recs[1], recs[2]))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancelled := make(chan struct{})
	go func() {
		defer close(cancelled)
		for recs[0].Calls.Load()+recs[1].Calls.Load()+recs[2].Calls.Load() == 0 {
			time.Sleep(time.Millisecond) // polls the state, asserts no duration
		}
		cancel()
	}()
	_, err = svc.Call(ctx, &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyAdaptive,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("x"), ClaimedResult: trust.JSON("x")}})
	<-cancelled
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	for i, r := range recs {
		if calls, returned := r.Calls.Load(), r.Returned.Load(); calls != returned {
			t.Errorf("worker %d: called %d times, returned %d", i, calls, returned)
		}
	}
}

// cancelAfter is a router.Service (an *router.Engine) that calls cancel
// once n of its ValidateV3 calls have returned: the caller gives up
// between two of adaptive's batches, after the runs of the first have
// all answered.
type cancelAfter struct {
	*router.Engine
	n      int
	cancel context.CancelFunc
	mu     sync.Mutex
	done   int
}

func (c *cancelAfter) ValidateV3(ctx context.Context, req *router.ValidateV3Request) (*router.ValidateV3Response, error) {
	resp, err := c.Engine.ValidateV3(ctx, req)
	c.mu.Lock()
	c.done++
	if c.done == c.n {
		c.cancel()
	}
	c.mu.Unlock()
	return resp, err
}

// TestService_Call_adaptiveCancelledBetweenBatches: the caller cancels
// once the first batch of an adaptive call (two runs that disagree, so
// the call must escalate) has answered. The call reports
// context.Canceled, as it does when the cancel lands during a batch, not
// a status made of the two votes in, as at the caller's deadline.
func TestService_Call_adaptiveCancelledBetweenBatches(t *testing.T) {
	valid, invalid := routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictInvalid)
	// Any two consecutive sessions (adaptive rotates its candidates)
	// disagree.
	e, err := router.NewEngine(routertest.Sessions(1, 4, valid, invalid, valid, invalid))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	svc, err := trust.New(&cancelAfter{Engine: e, n: 2, cancel: cancel})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Call(ctx, &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyAdaptive,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("x"), ClaimedResult: trust.JSON("x")}})
	if !errors.Is(err, context.Canceled) {
		var status trust.Status
		var runs int
		if resp != nil {
			status, runs = resp.Status, resp.Evidence.Launched
		}
		t.Errorf("cancelled call: err = %v, status %q from %d runs; want context.Canceled", err, status, runs)
	}
}
