package trustmcp_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
)

// reserveCheck is a MemoryReplay that records every Reserve whose until
// does not lie after its now, which the ReplayStore contract forbids: a
// record expired as it is made may be taken over at once by another
// server sharing the store.
type reserveCheck struct {
	x402.MemoryReplay
	mu  sync.Mutex
	bad []string
}

func (s *reserveCheck) Reserve(ctx context.Context, key string, now, until time.Time) (bool, error) {
	if !until.After(now) {
		s.mu.Lock()
		s.bad = append(s.bad, fmt.Sprintf("Reserve at %s until %s", now.Format(time.RFC3339), until.Format(time.RFC3339)))
		s.mu.Unlock()
	}
	return s.MemoryReplay.Reserve(ctx, key, now, until)
}

// A retry that waited for the first call of its payment reserves the
// payment for as long from the time it stopped waiting, not from the
// time it arrived: the first call ran two minutes and failed, and the
// retry's record still lies ahead of it.
func TestPaywall_retryAfterLongWaitReservesAhead(t *testing.T) {
	var (
		mu  sync.Mutex
		now = time.Now()
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	replay := &reserveCheck{}
	r := newReplayRig(t, trustmcp.PaywallConfig{Replay: replay, Now: clock})
	r.gate, r.in = make(chan struct{}), make(chan struct{}, 2)
	r.fail.Store(true)
	cs := connect(t, r.srv)
	p := r.payment(t)

	first := make(chan error, 1)
	go func() {
		_, err := paidCall(context.Background(), t, cs, "square", 9, p)
		first <- err
	}()
	<-r.in // the first call runs
	retried := make(chan error, 1)
	go func() {
		_, err := paidCall(context.Background(), t, cs, "square", 9, p)
		retried <- err
	}()
	// The retry arrives and waits for the first call; two minutes pass
	// before the first call fails.
	waitForFlight(t)
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	r.gate <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	close(r.gate)
	if err := <-retried; err != nil {
		t.Fatal(err)
	}
	replay.mu.Lock()
	defer replay.mu.Unlock()
	if len(replay.bad) > 0 {
		t.Errorf("records expired as they were made: %v", replay.bad)
	}
}

// waitForFlight returns once a call waits in the Paywall for the call of
// its payment that runs: a goroutine blocked in a select of
// (*paywall).serve.
func waitForFlight(t *testing.T) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for range 10000 {
		n := runtime.Stack(buf, true)
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			header, frames, _ := strings.Cut(g, "\n")
			if strings.Contains(header, "[select") && strings.HasPrefix(frames, "github.com/vouchkit/vouch/trust/trustmcp.(*paywall).serve(") {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("no call waited for the running call of its payment")
}
