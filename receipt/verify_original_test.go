package receipt_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// TestHandler_verify_unhashableOriginal: an original that is valid JSON
// but has no RFC 8785 form, a number beyond the range of an IEEE 754
// double, fails its hash check for that reason, not as "not valid JSON".
func TestHandler_verify_unhashableOriginal(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ name, member, value, check string }{
		{"output", "output", `1e400`, "output_hash"},
		{"input, nested", "input", `{"n":[1,-1e309]}`, "input_hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := f.do(t, "POST", receipt.VerifyPath, "", `{"receipt":`+string(f.shared.JSON)+`,"`+tc.member+`":`+tc.value+`}`)
			if resp.StatusCode != 200 {
				t.Fatalf("status = %d, want 200; %s", resp.StatusCode, body)
			}
			var got receipt.VerifyResponse
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			number := tc.value
			if tc.member == "input" {
				number = "-1e309"
			}
			want := receipt.Check{Name: receipt.CheckName(tc.check), Status: receipt.CheckFailed, Code: "hash_mismatch",
				Detail: "receipt: hash does not match: the original has no RFC 8785 canonical form to hash: number " + number + " is out of the range of an IEEE 754 double"}
			for _, c := range got.Checks {
				if c.Name == want.Name {
					if diff := cmp.Diff(want, c); diff != "" {
						t.Errorf("check (-want +got):\n%s", diff)
					}
					return
				}
			}
			t.Errorf("no %s check in %s", tc.check, body)
		})
	}
}
