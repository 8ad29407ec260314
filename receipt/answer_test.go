package receipt_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// paymentRequired is what `curl -s` of a paid route without a payment
// writes where a receipt was expected.
const paymentRequired = `{"type":"urn:vouch:problem:payment_required","title":"Payment Required","status":402,` +
	`"detail":"this route takes a payment","instance":"/api/v4/x402/trust","code":"payment_required"}`

// TestVerify_errorAnswer: a server's error answer given as the receipt,
// as it is or as a JSON string holding it, fails the schema check with
// the rule error_answer, naming the answer's status and title, and not
// the receipt members it lacks. A receipt, or JSON that is neither, is
// not taken for one.
func TestVerify_errorAnswer(t *testing.T) {
	s := newSigner(t, 1)
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	want := []receipt.FieldError{{Field: "(body)", Rule: receipt.RuleErrorAnswer,
		Message: "is an error answer of a server (an RFC 9457 problem), not a receipt: 402 Payment Required (payment_required): this route takes a payment"}}
	for _, data := range []string{paymentRequired, strconv.Quote(paymentRequired)} {
		res, err := v.Verify([]byte(data), receipt.Originals{}, t0())
		if !errors.Is(err, receipt.ErrSchema) {
			t.Fatalf("Verify(%s) = %v, want ErrSchema", data, err)
		}
		if diff := cmp.Diff(want, res.Checks[0].Errors); diff != "" {
			t.Errorf("Verify(%s) schema errors (-want +got):\n%s", data, diff)
		}
		if res.Checks[0].Detail != err.Error()[len("receipt: failed to check schema: "):] {
			t.Errorf("detail %q, want the error's %q", res.Checks[0].Detail, err)
		}
	}
	for _, data := range []string{
		`{"title":"Payment Required","status":402,"receipt_id":"rcpt_x"}`, // a receipt with stray members
		`{"title":"Payment Required","status":"402"}`,
		`{"status":402}`,
		`{"title":"OK","status":200}`,
	} {
		res, _ := v.Verify([]byte(data), receipt.Originals{}, t0())
		for _, e := range res.Checks[0].Errors {
			if e.Rule == receipt.RuleErrorAnswer {
				t.Errorf("Verify(%s) took it for an error answer: %v", data, e)
			}
		}
	}
	issued := issue(t, mustIssuer(t, s), fullParams())
	if _, err := v.Verify(issued.JSON, receipt.Originals{}, t0().Add(1)); err != nil {
		t.Errorf("Verify of a receipt: %v", err)
	}
}

// TestHandler_verifyErrorAnswer: POST /api/v4/verify_receipt of a
// server's error answer says so in its schema check.
func TestHandler_verifyErrorAnswer(t *testing.T) {
	f := newFixture(t)
	body, err := json.Marshal(map[string]json.RawMessage{"receipt": json.RawMessage(paymentRequired)})
	if err != nil {
		t.Fatal(err)
	}
	resp, out := f.do(t, http.MethodPost, receipt.VerifyPath, "", string(body))
	var got receipt.VerifyResponse
	if err := json.Unmarshal(out, &got); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d, body %s (%v)", resp.StatusCode, out, err)
	}
	if got.Valid || len(got.Checks) == 0 || len(got.Checks[0].Errors) != 1 || got.Checks[0].Errors[0].Rule != receipt.RuleErrorAnswer {
		t.Errorf("answer %s: want the schema check failed with rule %s", out, receipt.RuleErrorAnswer)
	}
}

func mustIssuer(t *testing.T, s receipt.Signer) *receipt.Issuer {
	t.Helper()
	is, _ := newIssuer(t, s)
	return is
}
