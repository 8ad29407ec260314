package evm_test

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// escrowBed is an offline escrow with a payer, a receiver authorizer and
// an offer relayed by the escrow's operator, at a clock the test moves.
type escrowBed struct {
	t          testing.TB
	escrow     *evm.Escrow
	offer      x402.PaymentRequirements
	terms      evm.AuthCaptureTerms
	payer      *evm.PrivateKey
	authorizer *evm.PrivateKey
	now        time.Time
	hold       evm.AuthCaptureHold
	authorize  *x402.PaymentPayload
}

const acAuthorizerKey = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba"

var acToken = mustParse(acUSDC)

func mustParse(s string) evm.Address {
	a, err := evm.ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return a
}

func newEscrowBed(t testing.TB, edit func(r *x402.PaymentRequirements)) *escrowBed {
	t.Helper()
	b := &escrowBed{t: t, escrow: &evm.Escrow{}, payer: acKey(t, acPayerKey), authorizer: acKey(t, acAuthorizerKey), now: acNow}
	b.escrow.Now = func() time.Time { return b.now }
	b.offer = acOffer()
	b.offer.Extra["receiverAuthorizer"] = b.authorizer.Address().String()
	if edit != nil {
		edit(&b.offer)
	}
	var err error
	if b.terms, err = evm.ParseAuthCaptureOffer(b.offer); err != nil {
		t.Fatal(err)
	}
	b.escrow.Fund(acToken, b.payer.Address(), big.NewInt(5_000_000))
	p, err := evm.SignAuthCapture(b.payer, b.terms, b.now, [32]byte{7})
	if err != nil {
		t.Fatal(err)
	}
	if b.hold, err = b.terms.Verify(p, b.now); err != nil {
		t.Fatal(err)
	}
	b.authorize = b.wrap(p)
	return b
}

func (b *escrowBed) wrap(payload any) *x402.PaymentPayload {
	raw, err := json.Marshal(payload)
	if err != nil {
		b.t.Fatal(err)
	}
	return &x402.PaymentPayload{X402Version: x402.Version2, Accepted: b.offer, Payload: raw}
}

func (b *escrowBed) settle(p *x402.PaymentPayload) *x402.SettleResponse {
	b.t.Helper()
	sr, err := b.escrow.Settle(context.Background(), p, b.offer)
	if err != nil {
		b.t.Fatal(err)
	}
	return sr
}

// state returns the escrow's balances of the bed's payment, zero when it
// was never held.
func (b *escrowBed) state() (capturable, refundable *big.Int) {
	p, ok := b.escrow.Payment(b.hold.Hash)
	if !ok {
		return new(big.Int), new(big.Int)
	}
	return p.Capturable, p.Refundable
}

// capture, void and refund make consents against the escrow's current
// balances.
func (b *escrowBed) capture(amount int64, voidRest bool) *x402.PaymentPayload {
	c, r := b.state()
	l, err := b.terms.SignCapture(b.authorizer, b.hold.PaymentInfo, b.hold.Payload.SaltNonce, big.NewInt(amount), c, r, voidRest)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.wrap(l)
}

func (b *escrowBed) void() *x402.PaymentPayload {
	l, err := b.terms.SignVoid(b.authorizer, b.hold.PaymentInfo, b.hold.Payload.SaltNonce)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.wrap(l)
}

func (b *escrowBed) refund(amount int64) *x402.PaymentPayload {
	c, r := b.state()
	l, err := b.terms.SignRefund(b.authorizer, b.hold.PaymentInfo, b.hold.Payload.SaltNonce, big.NewInt(amount), c, r)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.wrap(l)
}

func (b *escrowBed) must(sr *x402.SettleResponse) {
	b.t.Helper()
	if !sr.Success {
		b.t.Fatalf("refused: %s: %s", sr.ErrorReason, sr.ErrorMessage)
	}
}

func (b *escrowBed) balance(who evm.Address) int64 {
	return b.escrow.Balance(acToken, who).Int64()
}

// total is what every party of the bed holds, which no operation changes.
func (b *escrowBed) total() int64 {
	var sum int64
	for _, a := range []evm.Address{b.payer.Address(), b.terms.Receiver, b.terms.Deployment.Escrow, b.terms.Operator, b.terms.FeeRecipient} {
		sum += b.balance(a)
	}
	return sum
}

// A hold, a partial capture with its fee, a void of the rest and a
// refund, with every balance where the escrow would put it.
func TestEscrowLifecycleBalances(t *testing.T) {
	feeTo := mustParse("0x00000000000000000000000000000000000fee01")
	b := newEscrowBed(t, func(r *x402.PaymentRequirements) {
		r.Extra["feeRecipient"], r.Extra["minFeeBps"], r.Extra["maxFeeBps"] = feeTo.String(), 100, 100
	})
	payer, receiver, escrow, operator := b.payer.Address(), b.terms.Receiver, b.terms.Deployment.Escrow, b.terms.Operator
	b.escrow.Fund(acToken, operator, big.NewInt(1_000_000))
	type balances struct{ payer, escrow, receiver, fee, operator int64 }
	read := func() balances {
		return balances{b.balance(payer), b.balance(escrow), b.balance(receiver), b.balance(feeTo), b.balance(operator)}
	}
	steps := []struct {
		name string
		do   func() *x402.PaymentPayload
		want balances
	}{
		{"authorize", func() *x402.PaymentPayload { return b.authorize }, balances{4_000_000, 1_000_000, 0, 0, 1_000_000}},
		{"capture 750000, fee 1%", func() *x402.PaymentPayload { return b.capture(750_000, false) }, balances{4_000_000, 250_000, 742_500, 7_500, 1_000_000}},
		{"void the rest", b.void, balances{4_250_000, 0, 742_500, 7_500, 1_000_000}},
		{"refund 300000", func() *x402.PaymentPayload { return b.refund(300_000) }, balances{4_550_000, 0, 742_500, 7_500, 700_000}},
	}
	for _, s := range steps {
		sr := b.settle(s.do())
		b.must(sr)
		if got := read(); got != s.want {
			t.Fatalf("after %s: balances %+v, want %+v", s.name, got, s.want)
		}
		if sr.Payer != payer.String() || sr.Transaction == "" || sr.Network != b.offer.Network {
			t.Fatalf("after %s: response %+v", s.name, sr)
		}
	}
	if c, r := b.state(); c.Sign() != 0 || r.Int64() != 450_000 {
		t.Fatalf("capturable %s, refundable %s; want 0 and 450000", c, r)
	}
}

// Every operation from every state of a payment: allowed (the balances
// conserved) or refused with the escrow's reason.
func TestEscrowStateMachine(t *testing.T) {
	states := []struct {
		name  string
		setup func(b *escrowBed)
	}{
		{"none", func(*escrowBed) {}},
		{"held", func(b *escrowBed) { b.must(b.settle(b.authorize)) }},
		{"partly captured", func(b *escrowBed) { b.must(b.settle(b.authorize)); b.must(b.settle(b.capture(400_000, false))) }},
		{"captured", func(b *escrowBed) { b.must(b.settle(b.authorize)); b.must(b.settle(b.capture(1_000_000, false))) }},
		{"voided", func(b *escrowBed) { b.must(b.settle(b.authorize)); b.must(b.settle(b.void())) }},
		{"partly captured, rest voided", func(b *escrowBed) { b.must(b.settle(b.authorize)); b.must(b.settle(b.capture(400_000, true))) }},
		{"partly refunded", func(b *escrowBed) {
			b.must(b.settle(b.authorize))
			b.must(b.settle(b.capture(1_000_000, false)))
			b.must(b.settle(b.refund(300_000)))
		}},
		{"refunded", func(b *escrowBed) {
			b.must(b.settle(b.authorize))
			b.must(b.settle(b.capture(1_000_000, false)))
			b.must(b.settle(b.refund(1_000_000)))
		}},
	}
	const (
		ok         = ""
		insuff     = evm.ReasonAuthCaptureInsufficientAuth
		zero       = evm.ReasonAuthCaptureZeroAuthorization
		exceeds    = evm.ReasonAuthCaptureRefundExceeds
		early      = evm.ReasonAuthCaptureBeforeExpiry
		late       = evm.ReasonAuthCaptureCaptureExpired
		refundLate = evm.ReasonAuthCaptureRefundExpired
	)
	// A second authorize, or a second void of a voided payment, is the
	// same operation again: it gets the first outcome and moves nothing.
	ops := []string{"authorize", "capture 400000", "capture and void", "void", "refund 300000", "reclaim", "reclaim after the capture deadline", "capture after the capture deadline", "refund after the refund deadline"}
	want := map[string][]string{
		//                              authorize capture  cap+void void  refund   reclaim lateReclaim lateCapture lateRefund
		"none":                         {ok, insuff, insuff, zero, exceeds, zero, zero, late, refundLate},
		"held":                         {ok, ok, ok, ok, exceeds, early, ok, late, refundLate},
		"partly captured":              {ok, ok, ok, ok, ok, early, ok, late, refundLate},
		"captured":                     {ok, insuff, insuff, zero, ok, early, zero, late, refundLate},
		"voided":                       {ok, insuff, insuff, ok, exceeds, early, zero, late, refundLate},
		"partly captured, rest voided": {ok, insuff, insuff, zero, ok, early, zero, late, refundLate},
		"partly refunded":              {ok, insuff, insuff, zero, ok, early, zero, late, refundLate},
		"refunded":                     {ok, insuff, insuff, zero, exceeds, early, zero, late, refundLate},
	}
	for _, s := range states {
		for i, op := range ops {
			t.Run(s.name+"/"+op, func(t *testing.T) {
				t.Parallel()
				b := newEscrowBed(t, nil)
				b.escrow.Fund(acToken, b.terms.Operator, big.NewInt(1_000_000))
				s.setup(b)
				before := b.total()
				c0, r0 := b.state()
				var reason string
				var err error
				switch op {
				case "authorize":
					reason = b.settle(b.authorize).ErrorReason
				case "capture 400000":
					reason = b.settle(b.capture(400_000, false)).ErrorReason
				case "capture and void":
					reason = b.settle(b.capture(300_000, true)).ErrorReason
				case "void":
					reason = b.settle(b.void()).ErrorReason
				case "refund 300000":
					reason = b.settle(b.refund(300_000)).ErrorReason
				case "reclaim":
					_, err = b.escrow.Reclaim(b.hold.Hash, b.payer.Address())
				case "reclaim after the capture deadline":
					b.now = time.Unix(int64(b.terms.Extra.CaptureDeadline), 0)
					_, err = b.escrow.Reclaim(b.hold.Hash, b.payer.Address())
				case "capture after the capture deadline":
					p := b.capture(100_000, false)
					b.now = time.Unix(int64(b.terms.Extra.CaptureDeadline), 0)
					reason = b.settle(p).ErrorReason
				case "refund after the refund deadline":
					p := b.refund(100_000)
					b.now = time.Unix(int64(b.terms.Extra.RefundDeadline), 0)
					reason = b.settle(p).ErrorReason
				}
				if err != nil {
					reason = err.(*evm.AuthCaptureError).Reason
				}
				if reason != want[s.name][i] {
					t.Fatalf("reason %q, want %q", reason, want[s.name][i])
				}
				if after := b.total(); after != before {
					t.Fatalf("the parties held %d, now %d", before, after)
				}
				c1, r1 := b.state()
				if reason != ok && (c1.Cmp(c0) != 0 || r1.Cmp(r0) != 0) {
					t.Fatalf("a refused %s moved the payment from (%s, %s) to (%s, %s)", op, c0, r0, c1, r1)
				}
				if c1.Sign() < 0 || r1.Sign() < 0 || new(big.Int).Add(c1, r1).Cmp(b.terms.MaxAmount) > 0 {
					t.Fatalf("capturable %s and refundable %s exceed the hold", c1, r1)
				}
			})
		}
	}
}

func TestEscrowSupported(t *testing.T) {
	s, err := (&evm.Escrow{Networks: []string{"base-sepolia"}}).Supported(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Kinds) != 1 || s.Kinds[0].Scheme != x402.SchemeAuthCapture || s.Kinds[0].Network != "eip155:84532" ||
		s.Kinds[0].Extra["captureAuthorizer"] != evm.OfflineFacilitatorAddress {
		t.Fatalf("supported %+v", s)
	}
}

// Settle takes outside input: whatever the payload, it answers without a
// panic, and never leaves the parties with more or less than they had.
func FuzzEscrowSettle(f *testing.F) {
	b := newEscrowBed(f, nil)
	f.Add([]byte(b.authorize.Payload))
	b.must(b.settle(b.authorize))
	f.Add([]byte(b.capture(400_000, true).Payload))
	f.Add([]byte(b.refund(1).Payload))
	f.Add([]byte(b.void().Payload))
	f.Fuzz(func(t *testing.T, payload []byte) {
		b := newEscrowBed(t, nil)
		b.escrow.Fund(acToken, b.terms.Operator, big.NewInt(1_000_000))
		b.must(b.settle(b.authorize))
		before := b.total()
		p := &x402.PaymentPayload{X402Version: x402.Version2, Accepted: b.offer, Payload: payload}
		if _, err := b.escrow.Verify(context.Background(), p, b.offer); err != nil {
			t.Fatal(err)
		}
		b.settle(p)
		if c, r := b.state(); b.total() != before || new(big.Int).Add(c, r).Cmp(b.terms.MaxAmount) > 0 {
			t.Fatalf("the parties held %d, now %d; the payment (%s, %s)", before, b.total(), c, r)
		}
	})
}
