package trust_test

import (
	"context"
	"errors"
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
