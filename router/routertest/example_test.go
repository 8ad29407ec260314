package routertest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

var validateJob = &router.Job{Kind: router.KindValidate}

func ExampleVerdict() {
	w := routertest.Verdict(router.VerdictValid)
	res, err := w.Work(context.Background(), validateJob)
	fmt.Println(res.Verdict, res.Confidence, err)
	// Output: VALID 1 <nil>
}

func ExampleAnswer() {
	w := routertest.Answer(map[string]int{"total": 42})
	res, _ := w.Work(context.Background(), &router.Job{Kind: router.KindDelegate})
	fmt.Println(res.Output, len(res.Steps))
	// Output: map[total:42] 1
}

func ExampleFixed() {
	w := routertest.Fixed(router.Result{Verdict: router.VerdictNeedsSpec, Reasons: []string{"no schema"}})
	res, _ := w.Work(context.Background(), validateJob)
	fmt.Println(res.Verdict, res.Reasons)
	// Output: NEEDS_SPEC [no schema]
}

func ExampleFail() {
	errDown := errors.New("model endpoint down")
	_, err := routertest.Fail(errDown).Work(context.Background(), validateJob)
	fmt.Println(err)
	// Output: model endpoint down
}

func ExampleFlaky() {
	w := routertest.Flaky(routertest.Verdict(router.VerdictValid), 0.25, 1)
	failed := 0
	for range 1000 {
		if _, err := w.Work(context.Background(), validateJob); errors.Is(err, routertest.ErrFlaky) {
			failed++
		}
	}
	// About a quarter fail: the binomial standard deviation is under 14.
	fmt.Println(failed > 200 && failed < 300)
	// Output: true
}

func ExampleMix() {
	honest := routertest.Verdict(router.VerdictValid)
	w := routertest.Mix(honest, routertest.Lie(honest), 0.5, 7)
	seen := map[router.Verdict]bool{}
	for range 100 {
		res, _ := w.Work(context.Background(), validateJob)
		seen[res.Verdict] = true
	}
	fmt.Println(seen[router.VerdictValid], seen[router.VerdictInvalid])
	// Output: true true
}

func ExampleSlow() {
	w := routertest.Slow(routertest.Verdict(router.VerdictValid), time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err := w.Work(ctx, validateJob) // returns when ctx ends, not after an hour
	fmt.Println(errors.Is(err, context.DeadlineExceeded))
	// Output: true
}

func ExampleHang() {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("outcome decided"))
	_, err := routertest.Hang().Work(ctx, validateJob)
	fmt.Println(err)
	// Output: outcome decided
}

func ExamplePanic() {
	defer func() { fmt.Println("recovered:", recover()) }()
	routertest.Panic("boom").Work(context.Background(), validateJob)
	// Output: recovered: boom
}

func ExampleLie() {
	w := routertest.Lie(routertest.Verdict(router.VerdictTrue))
	res, _ := w.Work(context.Background(), &router.Job{Kind: router.KindFactcheck})
	fmt.Println(res.Verdict)
	// Output: FALSE
}

func ExampleSequence() {
	w := routertest.Sequence(
		routertest.Verdict(router.VerdictValid),
		routertest.Fail(errors.New("down")),
		routertest.Verdict(router.VerdictInvalid),
	)
	for range 4 {
		res, err := w.Work(context.Background(), validateJob)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(res.Verdict)
	}
	// Output:
	// VALID
	// error: down
	// INVALID
	// INVALID
}

func ExampleRecorder() {
	rec := routertest.NewRecorder(routertest.Hang())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec.Work(ctx, &router.Job{Kind: router.KindValidate, SessionID: 7})
	fmt.Println(rec.Calls.Load(), rec.Returned.Load(), rec.Cancelled.Load(), rec.Jobs()[0].SessionID)
	// Output: 1 1 1 7
}

func ExampleSessions() {
	ok := routertest.Verdict(router.VerdictValid)
	for _, s := range routertest.Sessions(101, 2, ok, ok, ok) {
		fmt.Println(s.ID, s.Pool)
	}
	// Output:
	// 101 pool-0
	// 102 pool-1
	// 103 pool-0
}

func ExampleDeadlineOnly() {
	ctx, cancel := context.WithTimeout(routertest.DeadlineOnly(time.Minute), time.Millisecond)
	defer cancel()
	<-ctx.Done() // a context derived from it with an earlier deadline keeps its own
	_, ok := routertest.DeadlineOnly(time.Minute).Deadline()
	fmt.Println(ok, routertest.DeadlineOnly(time.Minute).Done() == nil, ctx.Err())
	// Output: true true context deadline exceeded
}
