package x402test_test

import (
	"context"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

// TestVerdictWaits_honoursContext: the first Decide waits for Release,
// but a ledger reports a done context (x402.EscrowLedger: "a done context
// is reported before any work"), so a Decide whose context ends while it
// waits returns the context's error. Blocked until Release, a test that
// fails (t.Fatal) before closing Release would leave the handler blocked,
// and httptest.Server.Close would wait for it forever.
func TestVerdictWaits_honoursContext(t *testing.T) {
	l := &x402.MemoryEscrowLedger{Now: func() time.Time { return x402test.Payment(0, "1").HeldAt }}
	p := x402test.Payment(1, "10")
	if _, _, err := l.Hold(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	w := x402test.NewVerdictWaits(l)
	defer close(w.Release) // let the blocked Decide go, so the test itself leaks nothing
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := w.Decide(ctx, p.ID, "VALID", "10")
		done <- err
	}()
	<-w.Started
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("Decide on an ended context = nil, want the context's error")
		}
	case <-time.After(2 * time.Second):
		t.Errorf("Decide still blocked 2s after its context ended: VerdictWaits ignores the context")
	}
}

// TestVerdictOutage_downOnlyAtTheFirstVerdict: the doc says the ledger
// and facilitator "go down together as the first verdict is recorded"
// and stay down "until End". After End, a later Decide (another payment's
// verdict) should be recorded and the ledger stay up, not fail and start
// the outage again.
func TestVerdictOutage_downOnlyAtTheFirstVerdict(t *testing.T) {
	ctx := context.Background()
	l := &x402.MemoryEscrowLedger{Now: func() time.Time { return x402test.Payment(0, "1").HeldAt }}
	p1, p2 := x402test.Payment(1, "10"), x402test.Payment(2, "10")
	for _, p := range []x402.EscrowPayment{p1, p2} {
		if _, _, err := l.Hold(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	o := x402test.NewVerdictOutage(l, nil, true)
	if _, err := o.Decide(ctx, p1.ID, "VALID", "10"); err == nil {
		t.Fatal("first Decide succeeded; want the outage's error")
	}
	if _, err := o.Get(ctx, p1.ID); err == nil {
		t.Fatal("Get during the outage succeeded")
	}
	o.End()
	if _, err := o.Decide(ctx, p2.ID, "VALID", "10"); err != nil {
		t.Errorf("a second verdict, after End: Decide = %v; want it recorded (the outage was at the first verdict)", err)
	}
	if _, err := o.Get(ctx, p1.ID); err != nil {
		t.Errorf("after End and a second verdict: Get = %v; want the ledger up (the outage began again)", err)
	}
}
