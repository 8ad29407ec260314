package trust_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_examOrder: fast runs session 2 alone, wrongly, on each of
// 40 claims, and each is reported. Each exam asks the sessions in a
// drawn order until two verdicts disagree: it never asks session 2 again
// (its vote counts as cast), always asks session 1, the one dissenter,
// last, and asks each session once at most. The order is drawn, not
// ranked: session 1 soon leads the scope, yet the exams ask it after
// one to three others as well as first.
func TestService_examOrder(t *testing.T) {
	ctx := trust.WithCaller(context.Background(), "key:alice")
	var runs [5]atomic.Int64
	s, book := examFast(t, func(i int, w router.Worker) router.Worker { return countingRuns(w, &runs[i]) })
	before := func() [5]int64 {
		var n [5]int64
		for i := range runs {
			n[i] = runs[i].Load()
		}
		return n
	}
	asked := map[int64]int{} // exams by the runs they asked
	for i := range 40 {
		resp, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicyFast))
		if err != nil {
			t.Fatal(err)
		}
		was := before()
		if err := s.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid); err != nil {
			t.Fatal(err)
		}
		now, n := before(), int64(0)
		for j := range runs {
			d := now[j] - was[j]
			switch {
			case d > 1:
				t.Errorf("exam %d asked session %d %d times, want once at most", i+1, j+1, d)
			case j == 0 && d != 1:
				t.Errorf("exam %d asked session 1, the one dissenter, %d times, want once", i+1, d)
			case j == 1 && d != 0:
				t.Errorf("exam %d asked session 2, whose vote the call holds, %d times, want none", i+1, d)
			}
			n += d
		}
		asked[n]++
	}
	if len(asked) < 3 {
		t.Errorf("exams by the runs they asked: %v, want session 1 drawn at three places or more", asked)
	}
	if _, ok, _ := book.Leader(ctx, router.Scope(router.KindValidate, request(trust.ModeValidation, trust.PolicyFast).Task.Type), []int64{1, 2, 3, 4, 5}); !ok {
		t.Error("no leader after 40 exams that session 1 won")
	}
}

// TestService_examOneAtATime: an exam's runs never overlap. Each run
// lasts a while; an exam that asked two sessions at once would show both
// in flight. The order in which two calls at once reach the engine is
// the scheduler's, and the engine counts each run towards its session's
// share in that order.
func TestService_examOneAtATime(t *testing.T) {
	ctx := trust.WithCaller(context.Background(), "key:alice")
	var inFlight, most atomic.Int64
	s, _ := examFast(t, func(_ int, w router.Worker) router.Worker {
		return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m; m = most.Load() {
				if most.CompareAndSwap(m, n) {
					break
				}
			}
			time.Sleep(20 * time.Millisecond) // time for a run asked beside this one to start
			return w.Work(ctx, job)
		})
	})
	for range 5 {
		resp, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicyFast))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid); err != nil {
			t.Fatal(err)
		}
	}
	if n := most.Load(); n != 1 {
		t.Errorf("at most %d runs in flight at once, want 1", n)
	}
}

// examFast returns a service whose fast tier runs session 2 alone, over
// an engine that keeps reputation in the returned book, and five
// sessions: session 1 always answers INVALID and sessions 2 to 5 always
// VALID, each worker passed through wrap with its index.
func examFast(t *testing.T, wrap func(i int, w router.Worker) router.Worker) (*trust.Service, *reputation.Book) {
	t.Helper()
	ws := make([]router.Worker, 5)
	for i := range ws {
		v := router.VerdictValid
		if i == 0 {
			v = router.VerdictInvalid
		}
		ws[i] = wrap(i, verdictOf(v))
	}
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := router.NewEngine(routertest.Sessions(1, 1, ws...), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e, trust.WithSingleSession(2))
	if err != nil {
		t.Fatal(err)
	}
	return s, book
}
