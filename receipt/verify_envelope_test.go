package receipt_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// TestHandler_verifyObjectWithoutCanonicalForm: a receipt object that
// repeats a member name or escapes a lone UTF-16 surrogate is a receipt
// that fails its schema check, a 200 as docs/INTERFACE.md (10.5) says,
// the same answer as for the same text sent as a string; what is wrong
// with the envelope around it is still a 400 naming the member.
func TestHandler_verifyObjectWithoutCanonicalForm(t *testing.T) {
	f := newFixture(t)
	signed := string(f.shared.JSON)
	for name, text := range map[string]string{
		"a repeated member": strings.Replace(signed, `"status":"VALID"`, `"status":"VALID","status":"INVALID"`, 1),
		"a lone surrogate":  strings.Replace(signed, `"status":"VALID"`, `"status":"VALID","x":"\ud800"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			_, want := f.do(t, "POST", receipt.VerifyPath, "", `{"receipt":`+strconv.Quote(text)+`}`)
			resp, got := f.do(t, "POST", receipt.VerifyPath, "", `{"receipt": `+text+`}`)
			if resp.StatusCode != 200 {
				t.Fatalf("status = %d, want 200; %s", resp.StatusCode, got)
			}
			var w, g receipt.VerifyResponse
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(got, &g); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(w, g); diff != "" || g.Valid || g.Checks[0].Status != receipt.CheckFailed {
				t.Errorf("object form (-string form +object form):\n%s", diff)
			}
		})
	}
	repeated := strings.Replace(signed, `"status":"VALID"`, `"status":"VALID","status":"INVALID"`, 1)
	for name, tc := range map[string]struct{ body, field, rule string }{
		"receipt twice":        {`{"receipt":` + repeated + `,"receipt":` + signed + `}`, "receipt", "unique"},
		"unknown member":       {`{"receipt":` + repeated + `,"inputs":1}`, "inputs", "unknown"},
		"repeated in output":   {`{"receipt":` + repeated + `,"output":{"a":1,"a":2}}`, "output.a", "unique"},
		"surrogate in input":   {`{"receipt":` + repeated + `,"input":"\udc00"}`, "input", "unicode"},
		"trailing data":        {`{"receipt":` + repeated + `} {}`, "", ""},
		"not JSON":             {`{"receipt":` + repeated, "", ""},
		"invalid UTF-8 within": {`{"receipt":` + strings.Replace(repeated, `"summary"`, "\"summ\xffary\"", 1) + `}`, "", ""},
	} {
		resp, body := f.do(t, "POST", receipt.VerifyPath, "", tc.body)
		var p receipt.Error
		_ = json.Unmarshal(body, &p)
		if resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: status %d (%s), want a 400 problem; %s", name, resp.StatusCode, resp.Header.Get("Content-Type"), body)
			continue
		}
		var got []string
		for _, e := range p.Errors {
			got = append(got, e.Field+" "+e.Rule)
		}
		var want []string
		if tc.field != "" {
			want = []string{tc.field + " " + tc.rule}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: field errors (-want +got):\n%s", name, diff)
		}
	}
}
