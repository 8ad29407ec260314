package routertest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

func TestConstructors_panicOnMisuse(t *testing.T) {
	ok := routertest.Verdict(router.VerdictValid)
	tests := []struct {
		name string
		f    func()
	}{
		{"Fail nil", func() { routertest.Fail(nil) }},
		{"Flaky nil", func() { routertest.Flaky(nil, 0.1, 1) }},
		{"Flaky rate above 1", func() { routertest.Flaky(ok, 1.5, 1) }},
		{"Flaky negative rate", func() { routertest.Flaky(ok, -0.1, 1) }},
		{"Mix nil bad", func() { routertest.Mix(ok, nil, 0.1, 1) }},
		{"Slow nil", func() { routertest.Slow(nil, time.Second) }},
		{"Slow negative", func() { routertest.Slow(ok, -time.Second) }},
		{"Lie nil", func() { routertest.Lie(nil) }},
		{"Sequence empty", func() { routertest.Sequence() }},
		{"Sequence nil", func() { routertest.Sequence(ok, nil) }},
		{"NewRecorder nil", func() { routertest.NewRecorder(nil) }},
		{"Sessions zero first", func() { routertest.Sessions(0, 1, ok) }},
		{"Sessions no pools", func() { routertest.Sessions(1, 0, ok) }},
		{"Sessions nil worker", func() { routertest.Sessions(1, 1, ok, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", tt.name)
				}
			}()
			tt.f()
		})
	}
}

// TestMix_seeded checks that the choices depend on the seed and the call
// number only.
func TestMix_seeded(t *testing.T) {
	pattern := func(seed uint64) []bool {
		w := routertest.Flaky(routertest.Verdict(router.VerdictValid), 0.3, seed)
		var got []bool
		for range 64 {
			_, err := w.Work(context.Background(), &router.Job{})
			got = append(got, err != nil)
		}
		return got
	}
	a, b := pattern(42), pattern(42)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("same seed, different failures (-first +second):\n%s", diff)
	}
	if cmp.Equal(a, pattern(43)) {
		t.Errorf("seeds 42 and 43 gave the same 64 choices")
	}
}

func TestMix_extremeRates(t *testing.T) {
	ok := routertest.Verdict(router.VerdictValid)
	for _, tt := range []struct {
		rate     float64
		wantFail int
	}{{0, 0}, {1, 100}} {
		w := routertest.Flaky(ok, tt.rate, 9)
		failed := 0
		for range 100 {
			if _, err := w.Work(context.Background(), &router.Job{}); err != nil {
				failed++
			}
		}
		if failed != tt.wantFail {
			t.Errorf("Flaky rate %v: %d of 100 failed, want %d", tt.rate, failed, tt.wantFail)
		}
	}
}

func TestLie(t *testing.T) {
	tests := []struct {
		kind router.Kind
		res  router.Result
		want router.Result
	}{
		{router.KindValidate, router.Result{Verdict: router.VerdictValid}, router.Result{Verdict: router.VerdictInvalid}},
		{router.KindValidate, router.Result{Verdict: router.VerdictInvalid}, router.Result{Verdict: router.VerdictValid}},
		{router.KindValidate, router.Result{Verdict: router.VerdictRetry}, router.Result{Verdict: router.VerdictValid}},
		{router.KindValidate, router.Result{Verdict: router.VerdictNeedsSpec}, router.Result{Verdict: router.VerdictValid}},
		{router.KindFactcheck, router.Result{Verdict: router.VerdictTrue}, router.Result{Verdict: router.VerdictFalse}},
		{router.KindFactcheck, router.Result{Verdict: router.VerdictFalse}, router.Result{Verdict: router.VerdictTrue}},
		{router.KindDelegate, router.Result{Output: "42"}, router.Result{Output: map[string]any{"lie": "42"}}},
	}
	for _, tt := range tests {
		got, err := routertest.Lie(routertest.Fixed(tt.res)).Work(context.Background(), &router.Job{Kind: tt.kind})
		if err != nil {
			t.Fatalf("Lie(%v): %v", tt.res, err)
		}
		if diff := cmp.Diff(&tt.want, got); diff != "" {
			t.Errorf("Lie on %s %+v (-want +got):\n%s", tt.kind, tt.res, diff)
		}
	}
	boom := errors.New("boom")
	if _, err := routertest.Lie(routertest.Fail(boom)).Work(context.Background(), &router.Job{}); err != boom {
		t.Errorf("Lie(Fail(boom)) error = %v, want boom unchanged", err)
	}
}

func TestFixed_copies(t *testing.T) {
	w := routertest.Fixed(router.Result{Verdict: router.VerdictValid})
	a, _ := w.Work(context.Background(), &router.Job{})
	a.Verdict = router.VerdictInvalid
	b, _ := w.Work(context.Background(), &router.Job{})
	if b.Verdict != router.VerdictValid {
		t.Errorf("second answer has verdict %s after the first was modified, want VALID", b.Verdict)
	}
}

func TestSequence_concurrent(t *testing.T) {
	// Every worker of the script is used exactly once by the first calls,
	// whatever their interleaving.
	const n = 8
	recs := make([]*routertest.Recorder, n)
	ws := make([]router.Worker, n)
	for i := range recs {
		recs[i] = routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
		ws[i] = recs[i]
	}
	w := routertest.Sequence(ws...)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { w.Work(context.Background(), &router.Job{}) })
	}
	wg.Wait()
	for i, r := range recs {
		if got := r.Calls.Load(); got != 1 {
			t.Errorf("script worker %d called %d times, want 1", i, got)
		}
	}
}

func TestRecorder_countsPanicsAndCancellations(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Panic("boom"))
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v, want the wrapped worker's panic passed on", v)
			}
		}()
		rec.Work(context.Background(), &router.Job{})
	}()
	if c, r, x := rec.Calls.Load(), rec.Returned.Load(), rec.Cancelled.Load(); c != 1 || r != 1 || x != 0 {
		t.Errorf("after a panic: calls %d, returned %d, cancelled %d; want 1, 1, 0", c, r, x)
	}

	slow := routertest.NewRecorder(routertest.Slow(routertest.Verdict(router.VerdictValid), time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := slow.Work(ctx, &router.Job{})
		done <- err
	}()
	for slow.Calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if got := slow.Returned.Load(); got != 0 {
		t.Errorf("a call in progress counted as returned (%d)", got)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Slow cancelled returned %v, want context.Canceled", err)
	}
	if got := slow.Cancelled.Load(); got != 1 {
		t.Errorf("Cancelled = %d after one cancelled call, want 1", got)
	}
}
