package trust_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/vouchkit/vouch/trust"
)

func TestEscrowTerms_Commit(t *testing.T) {
	fixed := trust.EscrowTerms{Scheme: "auth-capture", ID: "0x01", Held: 5000}
	perRun := fixed
	perRun.PerRun = 1000
	for _, tc := range []struct {
		terms            trust.EscrowTerms
		status           trust.Status
		runs             int
		outcome, capture string
	}{
		{fixed, trust.StatusValid, 3, "capture", "5000"},
		{perRun, trust.StatusValid, 3, "capture", "3000"},
		{perRun, trust.StatusValid, 7, "capture", "5000"}, // never above the hold
		{perRun, trust.StatusValid, -1, "capture", "5000"},
		{fixed, trust.StatusInvalid, 3, "capture", "5000"}, // a definitive verdict is what was bought
		{perRun, trust.StatusInvalid, 2, "capture", "2000"},
		{perRun, trust.StatusValid, 0, "void", "0"}, // nothing to capture: the route voids the hold
		{perRun, trust.StatusRetry, 5, "void", "0"},
		{fixed, trust.StatusNeedsSpec, 1, "void", "0"},
		{fixed, trust.StatusSellerValid, 1, "void", "0"},
	} {
		p := tc.terms.Commit(tc.status, tc.runs)
		if p.Outcome != tc.outcome || p.Capture != tc.capture || p.Held != "5000" || p.ID != "0x01" {
			t.Errorf("%+v.Commit(%s, %d) = %+v, want %s of %s", tc.terms, tc.status, tc.runs, p, tc.outcome, tc.capture)
		}
	}
}

// A call paid in escrow at 1000 a run, of a hold of 5 runs, that
// launched 3 runs and was judged VALID: its evidence.payment.
func ExampleEscrowTerms_Commit() {
	terms := trust.EscrowTerms{Scheme: "auth-capture", Network: "eip155:84532", Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e",
		ID: "0x5c42f228b059cdcf8d74834185ea94f4875e937a621af10b18b51ddadb0d1d15", Held: 5000, PerRun: 1000}
	b, _ := json.Marshal(terms.Commit(trust.StatusValid, 3))
	fmt.Println(string(b))
	b, _ = json.Marshal(terms.Commit(trust.StatusRetry, 3))
	fmt.Println(string(b))
	// Output:
	// {"scheme":"auth-capture","network":"eip155:84532","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","id":"0x5c42f228b059cdcf8d74834185ea94f4875e937a621af10b18b51ddadb0d1d15","held":"5000","per_run":"1000","outcome":"capture","capture":"3000"}
	// {"scheme":"auth-capture","network":"eip155:84532","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","id":"0x5c42f228b059cdcf8d74834185ea94f4875e937a621af10b18b51ddadb0d1d15","held":"5000","per_run":"1000","outcome":"void","capture":"0"}
}
