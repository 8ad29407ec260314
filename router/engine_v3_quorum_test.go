package router_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestEngine_earlyQuorum asserts early quorum by what the straggling
// workers observe: their context is cancelled, and the call returns once
// they have returned.
func TestEngine_earlyQuorum(t *testing.T) {
	for _, straggler := range []struct {
		name string
		w    router.Worker
	}{{"hang", routertest.Hang()}, {"slow", routertest.Slow(routertest.Verdict(invalid), time.Hour)}} {
		t.Run(straggler.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			a, b := routertest.NewRecorder(straggler.w), routertest.NewRecorder(straggler.w)
			V := routertest.Verdict(valid)
			e := newEngine(t, routertest.Sessions(1, 5, V, a, V, b, V))
			got, err := e.ValidateV3(context.Background(), validateV3(5, router.DisagreeBestEffort))
			if err != nil {
				t.Fatalf("ValidateV3: %v", err)
			}
			if got.Verdict != valid {
				t.Errorf("verdict = %s, want VALID", got.Verdict)
			}
			if want := []router.Label{lV, lC, lV, lC, lV}; !cmp.Equal(got.Consensus.Verdicts, want) {
				t.Errorf("verdicts = %v, want %v", got.Consensus.Verdicts, want)
			}
			for i, r := range []*routertest.Recorder{a, b} {
				if r.Calls.Load() != 1 || r.Cancelled.Load() != 1 || r.Returned.Load() != 1 {
					t.Errorf("straggler %d: calls %d, cancelled %d, returned %d; want 1, 1, 1",
						i, r.Calls.Load(), r.Cancelled.Load(), r.Returned.Load())
				}
			}
			// 3 of 5 agreeing, 2 cut short before they answered: no vote
			// and no dissent, so unanimity among those that answered reads
			// as agreement 1 and scores like a unanimous 3.
			if got.Consensus.LowConfidence || got.Consensus.Agreement != 1 || got.Consensus.Confidence != 15.0/16 || got.Confidence != 15.0/16 {
				t.Errorf("consensus = %+v, want agreement 1, confidence 15/16, without low confidence", got.Consensus)
			}
		})
	}
}

func TestEngine_failHardStopsAtTheFirstDisagreement(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	straggler := routertest.NewRecorder(routertest.Hang())
	e := newEngine(t, routertest.Sessions(1, 3, routertest.Verdict(valid), routertest.Verdict(invalid), straggler))
	_, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeFailHard))
	p := asError(t, err, http.StatusConflict, "disagreement")
	if got := labelsOf(errorRuns(t, p)); !cmp.Equal(got, []router.Label{lV, lI, lC}) {
		t.Errorf("run labels = %v, want VALID, INVALID, CANCELLED", got)
	}
	if straggler.Cancelled.Load() != 1 {
		t.Errorf("straggler observed %d cancellations, want 1", straggler.Cancelled.Load())
	}
}

func TestEngine_ValidateV3_callerCancels(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	recs := []*routertest.Recorder{
		routertest.NewRecorder(routertest.Hang()),
		routertest.NewRecorder(routertest.Hang()),
		routertest.NewRecorder(routertest.Hang()),
	}
	e := newEngine(t, routertest.Sessions(1, 3, recs[0], recs[1], recs[2]))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for recs[0].Calls.Load()+recs[1].Calls.Load()+recs[2].Calls.Load() < 3 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeBestEffort))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	for i, r := range recs {
		if r.Cancelled.Load() != 1 || r.Returned.Load() != 1 {
			t.Errorf("worker %d: cancelled %d, returned %d; want 1, 1", i, r.Cancelled.Load(), r.Returned.Load())
		}
	}
}

// TestEngine_ValidateV3_lateDissent releases the deciding VALID and a
// dissenting INVALID at the same instant, a hundred times. Whichever the
// runner reads first, the dissent answered: it keeps its label, reasons
// and confidence (it is never relabelled CANCELLED) and counts against
// the winner. With honest accounting the figures no longer depend on the
// order of arrival, so the row is deterministic without arranging for
// the deciding vote to come last.
func TestEngine_ValidateV3_lateDissent(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for range 100 {
		gate := make(chan struct{})
		gated := func(v router.Verdict) router.Worker {
			return router.WorkerFunc(func(ctx context.Context, _ *router.Job) (*router.Result, error) {
				<-gate
				return &router.Result{Verdict: v, Confidence: 0.7, Reasons: []string{"said " + string(v)}}, nil
			})
		}
		first := router.WorkerFunc(func(ctx context.Context, _ *router.Job) (*router.Result, error) {
			defer close(gate) // the other two answer once this one has
			return &router.Result{Verdict: valid, Confidence: 0.9}, nil
		})
		e := newEngine(t, routertest.Sessions(1, 3, first, gated(valid), gated(invalid)))
		got, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeBestEffort))
		if err != nil {
			t.Fatal(err)
		}
		if want := []router.Label{lV, lV, lI}; !cmp.Equal(got.Consensus.Verdicts, want) {
			t.Fatalf("verdicts %v, want %v", got.Consensus.Verdicts, want)
		}
		if r := got.Evidence.Runs[2]; r.Label != lI || r.Confidence != 0.7 || len(r.Reasons) != 1 || r.Error != "" {
			t.Fatalf("the dissent's run = %+v, want INVALID with its confidence and reasons", r)
		}
		if got.Verdict != valid || got.Consensus.Agreement != 2.0/3 || got.Confidence != 11.0/16 || !got.Consensus.LowConfidence {
			t.Fatalf("verdict %s, agreement %v, confidence %v, low %t; want VALID, 2/3, 11/16, true",
				got.Verdict, got.Consensus.Agreement, got.Confidence, got.Consensus.LowConfidence)
		}
	}
}
