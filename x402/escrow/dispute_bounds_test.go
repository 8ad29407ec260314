package escrow

import (
	"strconv"
	"testing"
	"time"
)

// A caller's calls within the retention push out its own oldest, and
// what Disputes holds for them stays within its bound: the aging queue
// holds about twice the records remembered, not a slot for every call
// ever paid, whether the calls have new ids or repeat one.
func TestDisputes_agingBounded(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &Disputes{MaxCalls: 4, Now: func() time.Time { return now }}
	for i := range 5000 {
		d.Paid("alice", "payment-"+strconv.Itoa(i), "trace-"+strconv.Itoa(i))
		d.Paid("bob", "payment-b", "trace-same")
	}
	if got := len(d.calls); got != 5 {
		t.Errorf("%d calls remembered, want 5 (alice's latest 4 and bob's 1)", got)
	}
	if got, max := len(d.aging)-d.head, 2*len(d.calls)+minCompact; got > max {
		t.Errorf("the aging queue holds %d slots for %d calls remembered, want at most %d", got, len(d.calls), max)
	}
	if got := len(d.callers["alice"].slots); got != 4 {
		t.Errorf("alice holds %d slots, want 4", got)
	}
	// The records kept are still found, and expire with their time.
	if _, ok := d.calls[disputeCall{"alice", "trace-4999"}]; !ok {
		t.Error("alice's latest call is forgotten")
	}
	if _, ok := d.calls[disputeCall{"bob", "trace-same"}]; !ok {
		t.Error("bob's call is forgotten")
	}
	now = now.Add(d.Retention + 365*24*time.Hour)
	d.Paid("carol", "payment-c", "trace-c")
	if got := len(d.calls); got != 1 {
		t.Errorf("after the retention %d calls remembered, want carol's 1", got)
	}
}

// A MaxCalls of zero or less is the default bound, not a ring of no
// slots: Paid remembers the calls, and Report finds them.
func TestDisputes_nonPositiveMaxCallsIsTheDefault(t *testing.T) {
	for _, n := range []int{0, -1} {
		d := &Disputes{MaxCalls: n}
		for i := range 3 {
			d.Paid("alice", "payment-"+strconv.Itoa(i), "trace-"+strconv.Itoa(i))
		}
		if _, refunded, err := d.Report(t.Context(), "alice", "trace-0", true); err != nil || refunded {
			t.Errorf("MaxCalls %d: alice's first call = %v, %v; want it remembered", n, refunded, err)
		}
		if got := len(d.calls); got != 3 {
			t.Errorf("MaxCalls %d: %d calls remembered, want 3", n, got)
		}
	}
}
