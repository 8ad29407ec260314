package receipt_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

func paidParams() receipt.Params {
	p := fullParams()
	p.Payment = &receipt.Payment{Scheme: "auth-capture", Network: "eip155:84532", Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
		ID: "0x5c42f228b059cdcf8d74834185ea94f4875e937a621af10b18b51ddadb0d1d15", Held: "5000", PerRun: "1000", Outcome: "capture", Capture: "3000"}
	return p
}

// decision.payment is signed with the rest: the receipt verifies, reads
// back as issued, and a change to any of its members fails.
func TestIssue_payment(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	p := paidParams()
	data := issue(t, is, p).JSON
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	now := t0().Add(time.Hour)
	if res, err := v.Verify(data, receipt.Originals{}, now); err != nil || !res.Valid() {
		t.Fatalf("Verify = %+v, %v", res, err)
	}
	r, err := receipt.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.Payment, r.Decision.Payment); diff != "" {
		t.Errorf("decision.payment (-issued +read):\n%s", diff)
	}
	n := 0
	for _, l := range leaves(decodeMap(t, data), nil) {
		if len(l.path) < 2 || l.path[0] != ".decision" || l.path[1] != ".payment" {
			continue
		}
		n++
		for _, changed := range alternatives(l.val) {
			doc := decodeMap(t, data)
			set(doc, l.path, changed)
			if _, err := v.Verify(mustMarshal(t, doc), receipt.Originals{}, now); err == nil {
				t.Errorf("Verify accepted the receipt with %v changed from %v to %v", l, l.val, changed)
			}
		}
	}
	if n != 8 {
		t.Errorf("found %d members of decision.payment, want 8", n)
	}
}

// The schema check refuses a payment that is not one: each failure names
// its field.
func TestParse_paymentSchema(t *testing.T) {
	for _, tc := range []struct {
		edit  func(*receipt.Payment)
		field string
		rule  string
	}{
		{func(p *receipt.Payment) { p.Held = "05" }, "decision.payment.held", "amount"},
		{func(p *receipt.Payment) { p.Capture = "-1" }, "decision.payment.capture", "amount"},
		{func(p *receipt.Payment) { p.PerRun = "1.5" }, "decision.payment.per_run", "amount"},
		{func(p *receipt.Payment) { p.Outcome = "refund" }, "decision.payment.outcome", "oneof"},
		{func(p *receipt.Payment) { p.ID = "" }, "decision.payment.id", "required"},
	} {
		t.Run(tc.field+"/"+tc.rule, func(t *testing.T) {
			is, _ := newIssuer(t, newSigner(t, 1))
			r := issue(t, is, paidParams()).Receipt
			tc.edit(r.Decision.Payment)
			_, err := receipt.Parse(mustMarshal(t, r))
			var se *receipt.SchemaError
			if !errors.As(err, &se) || !hasField(se.Fields, tc.field, tc.rule) {
				t.Errorf("Parse = %v, want a schema error on %s (%s)", err, tc.field, tc.rule)
			}
			p := paidParams()
			tc.edit(p.Payment)
			if _, err := is.Issue(t.Context(), p); err == nil {
				t.Error("Issue wrote the receipt")
			}
		})
	}
}

func hasField(fs []receipt.FieldError, field, rule string) bool {
	for _, f := range fs {
		if f.Field == field && f.Rule == rule {
			return true
		}
	}
	return false
}

// An Issuer refuses to sign a payment that captures more than it held,
// or anything on a void: the receipt would state money moved that the
// hold could not move.
func TestIssue_paymentCaptureWithinHold(t *testing.T) {
	is, _ := newIssuer(t, newSigner(t, 1))
	for name, tc := range map[string]struct{ outcome, held, capture, want string }{
		"within the hold": {"capture", "5000", "5000", ""},
		"a void of 0":     {"void", "5000", "0", ""},
		"above the hold":  {"capture", "5000", "5001", "capture 5001 is more than the 5000 held"},
		"a void of some":  {"void", "5000", "1", "a void captures 1"},
	} {
		p := paidParams()
		p.Payment.Outcome, p.Payment.Held, p.Payment.Capture = tc.outcome, tc.held, tc.capture
		_, err := is.Issue(t.Context(), p)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Issue = %v", name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Issue = %v, want an error saying %q", name, err, tc.want)
		}
	}
}
