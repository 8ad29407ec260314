package trust_test

import (
	"errors"
	"strings"
	"testing"

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
