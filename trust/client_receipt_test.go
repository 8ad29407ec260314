package trust_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
)

// FetchReceipt returns the receipt it asked for, or an error: a server
// (or a cache before it) that answers with another receipt, whose
// signature verifies as well, is refused as malformed, naming the id it
// gave, rather than handing the caller another decision's receipt as the
// one named.
func TestClient_FetchReceipt_refusesAnotherReceipt(t *testing.T) {
	for _, tc := range []struct {
		body string
		want string // "" for the receipt
	}{
		{`{"receipt_id":"rcpt_mine","decision":{}}`, ""},
		{`{"receipt_id":"rcpt_other","decision":{}}`, `"rcpt_other"`},
		{`{"receipt_id":7,"decision":{}}`, "receipt_id"},
	} {
		got, err := newClient(t, answering(t, tc.body).URL).FetchReceipt(t.Context(), "rcpt_mine")
		switch {
		case tc.want == "" && (err != nil || string(got) != tc.body):
			t.Errorf("answered %s: %s, %v; want the receipt as issued", tc.body, got, err)
		case tc.want != "" && (!errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("answered %s: %s, %v; want an error wrapping ErrMalformedResponse naming %s", tc.body, got, err, tc.want)
		}
	}
}

// FetchReceipt reads the answer's receipt_id as receipt.Parse reads a
// receipt, by its exact name and given once: another receipt that also
// carries the id asked for under a name in another case, or a second
// receipt_id member, is refused as malformed, not handed on as the
// receipt named, which receipt.Parse would read as the other one.
func TestClient_FetchReceipt_readsReceiptIDExactly(t *testing.T) {
	_, other, _ := issued(t)
	const asked = "rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"
	body := func(extra string) string {
		return strings.TrimSuffix(string(other.JSON), "}") + "," + extra + "}"
	}
	for _, b := range []string{
		body(`"RECEIPT_ID":"` + asked + `"`),
		body(`"Receipt_Id":"` + asked + `"`),
		body(`"receipt_id":"` + asked + `"`),
	} {
		r, err := receipt.Parse([]byte(b))
		if err == nil && r.ReceiptID == asked {
			t.Fatalf("receipt.Parse reads %s as the receipt asked for", b)
		}
		got, err := newClient(t, answering(t, b).URL).FetchReceipt(t.Context(), asked)
		if !errors.Is(err, router.ErrMalformedResponse) {
			t.Errorf("answered %s: %s, %v; want an error wrapping ErrMalformedResponse", b, got, err)
		}
	}
}
