// Package x402test checks implementations of the store interfaces of
// package x402: suites that the in-memory stores, the database stores and
// any other store run alike.
//
// Start with the suite of the interface you implement: [TestEscrowLedger]
// (x402.EscrowLedger), [TestOutcomeStore] (x402.OutcomeStore),
// [TestPaymentIDStore] (x402.PaymentIDStore) or [TestReplayStore]
// (x402.ReplayStore), each called from the store's own test with a
// constructor of empty stores (TestReplayStore asks for two handles on
// one store, as two servers sharing it hold).
//
// The rest serves tests of escrow recovery: [EscrowBed] is an offline
// escrow served as a facilitator over loopback HTTP, whose balances show
// what was held, captured, voided and refunded; [KillBetweenHoldAndVerdict]
// kills a child process that holds payments and checks what the
// recoveries of the ledgers it left then do; [VerdictOutage] and
// [VerdictWaits] wrap a ledger to fail, or wait, as the first verdict is
// recorded.
package x402test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
)

// base is the instant the suite treats as now; times are set around it in
// whole seconds.
func base() time.Time { return time.Date(2026, 8, 20, 12, 0, 0, 0, time.UTC) }

// TestEscrowLedger runs the conformance suite against ledgers made by
// newLedger, which is called once per subtest and must return an empty
// ledger whose clock reads now (the suite's payments are held at now and
// keep their deadlines after it); close it with t.Cleanup. The suite
// checks that:
//
//   - a hold comes back with every field (times to the second), in state
//     held with nothing captured or refunded; a second Hold of its id
//     returns the first record and false;
//   - an unknown id is ErrEscrowUnknown for Get, Decide and Record;
//   - Decide records a verdict once (a second returns the first),
//     refuses a capture above the hold (ErrEscrowAmount) and a verdict
//     on a payment voided without one (ErrEscrowState);
//   - Record keeps each operation's first outcome: a second Record of a
//     key returns the first outcome and false, and changes nothing;
//   - every transition of the lifecycle allowed and refused: capture and
//     void from held only, a capture never above the hold, refunds only
//     of what was captured and not refunded, an unsuccessful outcome
//     recorded but moving nothing, whatever its amount (ErrEscrowState,
//     ErrEscrowAmount);
//   - Unfinished lists exactly the held payments, oldest hold first (by
//     HeldAt, not ID), within its limit;
//   - returned payments share no memory with the ledger;
//   - of concurrent Records of one operation, exactly one reports true,
//     and every other returns its outcome (run it with -race);
//   - a done context is reported before any work;
//   - for a ledger that is an escrow.Claimer: a held payment is claimed
//     by one caller at a time, and again once the claim lapses; a
//     finished payment or an unknown id by none, without an error.
func TestEscrowLedger(t *testing.T, newLedger func(t *testing.T, now func() time.Time) x402.EscrowLedger) {
	now := base
	t.Run("HoldRoundTrip", func(t *testing.T) { holdRoundTrip(t, newLedger(t, now)) })
	t.Run("Unknown", func(t *testing.T) { unknown(t, newLedger(t, now)) })
	t.Run("Decide", func(t *testing.T) { decide(t, newLedger(t, now)) })
	t.Run("RecordOnce", func(t *testing.T) { recordOnce(t, newLedger(t, now)) })
	t.Run("Transitions", func(t *testing.T) { transitions(t, newLedger, now) })
	t.Run("Unfinished", func(t *testing.T) { unfinished(t, newLedger(t, now)) })
	t.Run("ConcurrentRecord", func(t *testing.T) { concurrentRecord(t, newLedger(t, now)) })
	t.Run("ContextDone", func(t *testing.T) { contextDone(t, newLedger(t, now)) })
	if l := newLedger(t, now); isClaimer(l) {
		t.Run("Claim", func(t *testing.T) { claim(t, l, l.(escrow.Claimer)) })
	}
}

func isClaimer(l x402.EscrowLedger) bool {
	_, ok := l.(escrow.Claimer)
	return ok
}

// Payment returns a held payment numbered n with a hold of amount, as
// the suite records it; tests of other packages may use it too.
func Payment(n int, amount string) x402.EscrowPayment {
	return x402.EscrowPayment{
		ID: fmt.Sprintf("0x%064x", n),
		Offer: x402.PaymentRequirements{
			Scheme: x402.SchemeAuthCapture, Network: "eip155:84532", Amount: amount,
			Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
			MaxTimeoutSeconds: 60, Extra: map[string]any{"captureDeadline": float64(base().Add(time.Hour).Unix())},
		},
		Payload:         json.RawMessage(fmt.Sprintf(`{"salt":"0x%064x","signature":"0x01"}`, n)),
		Payer:           "0x857b06519E91e3A54538791bDbb0E22373e36b66",
		Amount:          amount,
		HeldAt:          base().Add(time.Duration(n) * time.Second),
		CaptureDeadline: base().Add(time.Hour),
		RefundDeadline:  base().Add(24 * time.Hour),
		Hold:            x402.SettleResponse{Success: true, Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66", Transaction: fmt.Sprintf("0x%064x", n+1000), Network: "eip155:84532", Amount: amount},
	}
}

// outcome returns a successful outcome of op, keyed op.
func outcome(op, amount string) x402.EscrowOutcome {
	return x402.EscrowOutcome{Key: op, Operation: op, Amount: amount, At: base().Add(time.Minute),
		Settlement: x402.SettleResponse{Success: true, Transaction: "0x" + op, Network: "eip155:84532", Amount: amount}}
}

func cmpPayment() cmp.Options {
	return cmp.Options{
		cmpopts.EquateEmpty(),
		cmp.Comparer(func(a, b time.Time) bool { return a.Truncate(time.Second).Equal(b.Truncate(time.Second)) }),
		cmp.Comparer(func(a, b json.RawMessage) bool { return jsonEqual(a, b) }),
	}
}

// jsonEqual compares JSON by value, as a database may store it
// normalised.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return cmp.Equal(x, y)
}

func mustHold(t *testing.T, l x402.EscrowLedger, p x402.EscrowPayment) x402.EscrowPayment {
	t.Helper()
	got, first, err := l.Hold(context.Background(), p)
	if err != nil || !first {
		t.Fatalf("Hold(%s) = first %v, %v; want a new hold", p.ID, first, err)
	}
	return got
}

// held returns p as a ledger keeps it right after Hold.
func held(p x402.EscrowPayment) x402.EscrowPayment {
	p.State, p.Captured, p.Refunded = x402.EscrowHeld, "0", "0"
	return p
}

func holdRoundTrip(t *testing.T, l x402.EscrowLedger) {
	ctx := context.Background()
	p := Payment(1, "1000")
	p.State, p.Verdict, p.Captured = x402.EscrowCaptured, "VALID", "1000" // ignored
	got := mustHold(t, l, p)
	want := held(Payment(1, "1000"))
	if diff := cmp.Diff(want, got, cmpPayment()); diff != "" {
		t.Errorf("Hold returned (-want +got):\n%s", diff)
	}
	again, err := l.Get(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, again, cmpPayment()); diff != "" {
		t.Errorf("Get after Hold (-want +got):\n%s", diff)
	}
	// Returned payments share no memory with the ledger.
	for _, p := range []x402.EscrowPayment{got, again} {
		if len(p.Payload) > 0 {
			p.Payload[0] = 'X'
		}
		if p.Offer.Extra != nil {
			p.Offer.Extra["captureDeadline"] = "changed"
		}
	}
	if third, err := l.Get(ctx, p.ID); err != nil {
		t.Fatal(err)
	} else if diff := cmp.Diff(want, third, cmpPayment()); diff != "" {
		t.Errorf("changing returned payments changed the ledger's (-want +got):\n%s", diff)
	}
	other := Payment(1, "5")
	second, first, err := l.Hold(ctx, other)
	if err != nil || first {
		t.Fatalf("second Hold = first %v, %v; want false, nil", first, err)
	}
	if diff := cmp.Diff(want, second, cmpPayment()); diff != "" {
		t.Errorf("second Hold did not return the first record (-want +got):\n%s", diff)
	}
	if _, _, err := l.Hold(ctx, x402.EscrowPayment{Amount: "1"}); err == nil {
		t.Error("Hold of a payment without an id succeeded")
	}
	bad := Payment(2, "-1")
	if _, _, err := l.Hold(ctx, bad); !errors.Is(err, x402.ErrEscrowAmount) {
		t.Errorf("Hold of amount -1 = %v, want ErrEscrowAmount", err)
	}
}

func unknown(t *testing.T, l x402.EscrowLedger) {
	ctx := context.Background()
	id := Payment(9, "1").ID
	if _, err := l.Get(ctx, id); !errors.Is(err, x402.ErrEscrowUnknown) {
		t.Errorf("Get = %v, want ErrEscrowUnknown", err)
	}
	if _, err := l.Decide(ctx, id, "VALID", "1"); !errors.Is(err, x402.ErrEscrowUnknown) {
		t.Errorf("Decide = %v, want ErrEscrowUnknown", err)
	}
	if _, _, _, err := l.Record(ctx, id, outcome(x402.EscrowVoid, "")); !errors.Is(err, x402.ErrEscrowUnknown) {
		t.Errorf("Record = %v, want ErrEscrowUnknown", err)
	}
}

func decide(t *testing.T, l x402.EscrowLedger) {
	ctx := context.Background()
	p := mustHold(t, l, Payment(1, "1000"))
	if _, err := l.Decide(ctx, p.ID, "VALID", "1001"); !errors.Is(err, x402.ErrEscrowAmount) {
		t.Errorf("Decide above the hold = %v, want ErrEscrowAmount", err)
	}
	if _, err := l.Decide(ctx, p.ID, "VALID", "ten"); !errors.Is(err, x402.ErrEscrowAmount) {
		t.Errorf("Decide of amount ten = %v, want ErrEscrowAmount", err)
	}
	got, err := l.Decide(ctx, p.ID, "VALID", "400")
	if err != nil {
		t.Fatal(err)
	}
	if got.Verdict != "VALID" || got.Capture != "400" || got.State != x402.EscrowHeld {
		t.Errorf("Decide = verdict %q capture %q state %q, want VALID 400 held", got.Verdict, got.Capture, got.State)
	}
	again, err := l.Decide(ctx, p.ID, "INVALID", "0")
	if err != nil {
		t.Fatal(err)
	}
	if again.Verdict != "VALID" || again.Capture != "400" {
		t.Errorf("second Decide = %q %q, want the first decision VALID 400", again.Verdict, again.Capture)
	}
	voided := mustHold(t, l, Payment(2, "1000"))
	if _, _, _, err := l.Record(ctx, voided.ID, outcome(x402.EscrowVoid, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Decide(ctx, voided.ID, "VALID", "400"); !errors.Is(err, x402.ErrEscrowState) {
		t.Errorf("Decide of a payment voided without a verdict = %v, want ErrEscrowState", err)
	}
	if got, err := l.Get(ctx, voided.ID); err != nil || got.Verdict != "" || got.Capture != "" {
		t.Errorf("after Decide of a voided payment: verdict %q capture %q, %v; want none", got.Verdict, got.Capture, err)
	}
}

func recordOnce(t *testing.T, l x402.EscrowLedger) {
	ctx := context.Background()
	p := mustHold(t, l, Payment(1, "1000"))
	o := outcome(x402.EscrowCapture, "700")
	got, first, fresh, err := l.Record(ctx, p.ID, o)
	if err != nil || !fresh {
		t.Fatalf("Record = fresh %v, %v; want true, nil", fresh, err)
	}
	if diff := cmp.Diff(o, first, cmpPayment()); diff != "" {
		t.Errorf("Record's outcome (-want +got):\n%s", diff)
	}
	if got.State != x402.EscrowCaptured || got.Captured != "700" {
		t.Errorf("after capture: state %q captured %q, want captured 700", got.State, got.Captured)
	}
	other := outcome(x402.EscrowCapture, "1000")
	other.Settlement.Transaction = "0xother"
	again, replay, fresh, err := l.Record(ctx, p.ID, other)
	if err != nil || fresh {
		t.Fatalf("second Record = fresh %v, %v; want false, nil", fresh, err)
	}
	if diff := cmp.Diff(o, replay, cmpPayment()); diff != "" {
		t.Errorf("second Record did not return the first outcome (-want +got):\n%s", diff)
	}
	if again.Captured != "700" || len(again.Operations) != 1 {
		t.Errorf("second Record changed the payment: captured %q, %d operations", again.Captured, len(again.Operations))
	}
	stored, err := l.Get(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o2, ok := stored.Outcome(x402.EscrowCapture); !ok || o2.Settlement.Transaction != "0xcapture" {
		t.Errorf("Get: outcome of capture = %+v, %v; want the first", o2, ok)
	}
	if _, _, _, err := l.Record(ctx, p.ID, x402.EscrowOutcome{Operation: x402.EscrowRefund, Amount: "1"}); err == nil {
		t.Error("Record of an outcome without a key succeeded")
	}
}

func transitions(t *testing.T, newLedger func(*testing.T, func() time.Time) x402.EscrowLedger, now func() time.Time) {
	failed := func(o x402.EscrowOutcome) x402.EscrowOutcome {
		o.Settlement = x402.SettleResponse{ErrorReason: "invalid_auth_capture_evm_authorization_expired", Network: "eip155:84532"}
		return o
	}
	keyed := func(o x402.EscrowOutcome, key string) x402.EscrowOutcome { o.Key = key; return o }
	type want struct {
		err               error
		state             x402.EscrowState
		captured, refunds string
	}
	for _, tc := range []struct {
		name   string
		before []x402.EscrowOutcome
		op     x402.EscrowOutcome
		want   want
	}{
		{"capture all", nil, outcome(x402.EscrowCapture, "1000"), want{nil, x402.EscrowCaptured, "1000", "0"}},
		{"capture part", nil, outcome(x402.EscrowCapture, "1"), want{nil, x402.EscrowCaptured, "1", "0"}},
		{"capture above the hold", nil, outcome(x402.EscrowCapture, "1001"), want{x402.ErrEscrowAmount, x402.EscrowHeld, "0", "0"}},
		{"capture not a number", nil, outcome(x402.EscrowCapture, "1e3"), want{x402.ErrEscrowAmount, x402.EscrowHeld, "0", "0"}},
		{"void", nil, outcome(x402.EscrowVoid, ""), want{nil, x402.EscrowVoided, "0", "0"}},
		{"failed capture moves nothing", nil, failed(outcome(x402.EscrowCapture, "1000")), want{nil, x402.EscrowHeld, "0", "0"}},
		{"failed void moves nothing", nil, failed(outcome(x402.EscrowVoid, "")), want{nil, x402.EscrowHeld, "0", "0"}},
		{"void after a failed capture", []x402.EscrowOutcome{failed(outcome(x402.EscrowCapture, "1000"))}, outcome(x402.EscrowVoid, ""), want{nil, x402.EscrowVoided, "0", "0"}},
		{"capture after void", []x402.EscrowOutcome{outcome(x402.EscrowVoid, "")}, outcome(x402.EscrowCapture, "1"), want{x402.ErrEscrowState, x402.EscrowVoided, "0", "0"}},
		{"void after capture", []x402.EscrowOutcome{outcome(x402.EscrowCapture, "10")}, outcome(x402.EscrowVoid, ""), want{x402.ErrEscrowState, x402.EscrowCaptured, "10", "0"}},
		{"second capture", []x402.EscrowOutcome{outcome(x402.EscrowCapture, "10")}, keyed(outcome(x402.EscrowCapture, "10"), "capture-2"), want{x402.ErrEscrowState, x402.EscrowCaptured, "10", "0"}},
		{"refund of a hold", nil, outcome(x402.EscrowRefund, "1"), want{x402.ErrEscrowState, x402.EscrowHeld, "0", "0"}},
		{"refund after void", []x402.EscrowOutcome{outcome(x402.EscrowVoid, "")}, outcome(x402.EscrowRefund, "1"), want{x402.ErrEscrowState, x402.EscrowVoided, "0", "0"}},
		{"refund part", []x402.EscrowOutcome{outcome(x402.EscrowCapture, "600")}, outcome(x402.EscrowRefund, "200"), want{nil, x402.EscrowRefunded, "600", "200"}},
		{"refund all", []x402.EscrowOutcome{outcome(x402.EscrowCapture, "600")}, outcome(x402.EscrowRefund, "600"), want{nil, x402.EscrowRefunded, "600", "600"}},
		{"refund above captured", []x402.EscrowOutcome{outcome(x402.EscrowCapture, "600")}, outcome(x402.EscrowRefund, "601"), want{x402.ErrEscrowAmount, x402.EscrowCaptured, "600", "0"}},
		{"second refund of the rest", []x402.EscrowOutcome{outcome(x402.EscrowCapture, "600"), outcome(x402.EscrowRefund, "200")}, keyed(outcome(x402.EscrowRefund, "400"), "refund-2"), want{nil, x402.EscrowRefunded, "600", "600"}},
		{"second refund above the rest", []x402.EscrowOutcome{outcome(x402.EscrowCapture, "600"), outcome(x402.EscrowRefund, "200")}, keyed(outcome(x402.EscrowRefund, "401"), "refund-2"), want{x402.ErrEscrowAmount, x402.EscrowRefunded, "600", "200"}},
		{"failed refund moves nothing", []x402.EscrowOutcome{outcome(x402.EscrowCapture, "600")}, failed(outcome(x402.EscrowRefund, "600")), want{nil, x402.EscrowCaptured, "600", "0"}},
		{"failed refund above the rest is recorded", []x402.EscrowOutcome{outcome(x402.EscrowCapture, "600"), outcome(x402.EscrowRefund, "200")}, keyed(failed(outcome(x402.EscrowRefund, "600")), "refund-2"), want{nil, x402.EscrowRefunded, "600", "200"}},
		{"unknown operation", nil, x402.EscrowOutcome{Key: "charge", Operation: "charge", Amount: "1", Settlement: x402.SettleResponse{Success: true}}, want{x402.ErrEscrowState, x402.EscrowHeld, "0", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			l := newLedger(t, now)
			p := mustHold(t, l, Payment(1, "1000"))
			for _, o := range tc.before {
				if _, _, _, err := l.Record(ctx, p.ID, o); err != nil {
					t.Fatalf("Record(%s) before: %v", o.Key, err)
				}
			}
			_, _, fresh, err := l.Record(ctx, p.ID, tc.op)
			if !errors.Is(err, tc.want.err) || (err != nil && tc.want.err == nil) {
				t.Fatalf("Record(%s %s) = %v, want %v", tc.op.Operation, tc.op.Amount, err, tc.want.err)
			}
			if err == nil && !fresh {
				t.Errorf("Record(%s) reported a replay", tc.op.Key)
			}
			got, err := l.Get(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tc.want.state || got.Captured != tc.want.captured || got.Refunded != tc.want.refunds {
				t.Errorf("after: state %q captured %q refunded %q, want %q %q %q", got.State, got.Captured, got.Refunded, tc.want.state, tc.want.captured, tc.want.refunds)
			}
			wantOps := len(tc.before)
			if tc.want.err == nil {
				wantOps++
			}
			if len(got.Operations) != wantOps {
				t.Errorf("after: %d operations recorded, want %d (a refused one is not recorded)", len(got.Operations), wantOps)
			}
		})
	}
}

func unfinished(t *testing.T, l x402.EscrowLedger) {
	ctx := context.Background()
	for _, n := range []int{3, 1, 4, 2, 5} {
		mustHold(t, l, Payment(n, "10"))
	}
	// Held first, with the greatest id: the order is by HeldAt, not ID.
	early := Payment(6, "10")
	early.HeldAt = base()
	mustHold(t, l, early)
	if _, _, _, err := l.Record(ctx, Payment(4, "10").ID, outcome(x402.EscrowCapture, "10")); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := l.Record(ctx, Payment(2, "10").ID, outcome(x402.EscrowVoid, "")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Decide(ctx, Payment(5, "10").ID, "VALID", "10"); err != nil {
		t.Fatal(err)
	}
	ids := func(ps []x402.EscrowPayment) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	got, err := l.Unfinished(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{Payment(6, "").ID, Payment(1, "").ID, Payment(3, "").ID, Payment(5, "").ID}
	if diff := cmp.Diff(want, ids(got)); diff != "" {
		t.Errorf("Unfinished(0) (-want +got):\n%s", diff)
	}
	if len(got) == 4 && (got[3].Verdict != "VALID" || got[3].Capture != "10") {
		t.Errorf("Unfinished: payment 5 lost its verdict: %q %q", got[3].Verdict, got[3].Capture)
	}
	got, err = l.Unfinished(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want[:2], ids(got)); diff != "" {
		t.Errorf("Unfinished(2) (-want +got):\n%s", diff)
	}
}

func concurrentRecord(t *testing.T, l x402.EscrowLedger) {
	ctx := context.Background()
	p := mustHold(t, l, Payment(1, "1000"))
	const n = 16
	outcomes := make([]x402.EscrowOutcome, n)
	fresh := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			o := outcome(x402.EscrowCapture, "1000")
			if i%2 == 1 {
				o = outcome(x402.EscrowVoid, "")
			}
			o.Key = "settle"
			o.Settlement.Transaction = fmt.Sprintf("0x%02x", i)
			_, outcomes[i], fresh[i], errs[i] = l.Record(ctx, p.ID, o)
		})
	}
	wg.Wait()
	winner := -1
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Record %d: %v", i, errs[i])
		}
		if fresh[i] {
			if winner >= 0 {
				t.Fatalf("Records %d and %d both reported true", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatal("no Record reported true")
	}
	for i := range n {
		if diff := cmp.Diff(outcomes[winner], outcomes[i], cmpPayment()); diff != "" {
			t.Errorf("Record %d did not return the winner's outcome (-winner +got):\n%s", i, diff)
		}
	}
	got, err := l.Get(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Operations) != 1 {
		t.Errorf("%d operations recorded, want 1", len(got.Operations))
	}
}

func contextDone(t *testing.T, l x402.EscrowLedger) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := Payment(1, "10")
	if _, _, err := l.Hold(ctx, p); !errors.Is(err, context.Canceled) {
		t.Errorf("Hold = %v, want context.Canceled", err)
	}
	if _, err := l.Get(context.Background(), p.ID); !errors.Is(err, x402.ErrEscrowUnknown) {
		t.Errorf("Hold on a done context recorded the payment: Get = %v", err)
	}
	mustHold(t, l, p)
	if _, err := l.Get(ctx, p.ID); !errors.Is(err, context.Canceled) {
		t.Errorf("Get = %v, want context.Canceled", err)
	}
	if _, err := l.Decide(ctx, p.ID, "VALID", "1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Decide = %v, want context.Canceled", err)
	}
	if _, _, _, err := l.Record(ctx, p.ID, outcome(x402.EscrowVoid, "")); !errors.Is(err, context.Canceled) {
		t.Errorf("Record = %v, want context.Canceled", err)
	}
	if _, err := l.Unfinished(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Unfinished = %v, want context.Canceled", err)
	}
}
