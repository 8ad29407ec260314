package receipt_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
)

// TestVerify_jcsRule: a receipt text that has no RFC 8785 canonical form
// because it repeats a member name or holds invalid UTF-8 fails the
// schema check with the rule "jcs", as Verify and docs/INTERFACE.md
// (10.5) say, naming where, whichever member it is.
func TestVerify_jcsRule(t *testing.T) {
	s := newSigner(t, 1)
	is, _ := newIssuer(t, s)
	data := string(issue(t, is, fullParams()).JSON)
	v := newVerifier(t, []receipt.PublicKey{s.Public()})
	for name, tc := range map[string]struct{ text, field string }{
		"a repeated member":           {strings.Replace(data, `"mode":"validation"`, `"mode":"validation","mode":"delegation"`, 1), "mode"},
		"a repeated nested member":    {strings.Replace(data, `"status":"VALID"`, `"status":"VALID","status":"INVALID"`, 1), "decision.status"},
		"a repeated unknown member":   {strings.Replace(data, `"mode":"validation"`, `"mode":"validation","x":{"a":1,"a":2}`, 1), "x.a"},
		"invalid UTF-8":               {strings.Replace(data, `"summary"`, "\"summ\xffary\"", 1), "task_meta.type"},
		"invalid UTF-8, unknown name": {strings.Replace(data, `"mode":"validation"`, "\"mode\":\"validation\",\"\xff\":1", 1), "(body)"},
	} {
		res, _ := v.Verify([]byte(tc.text), receipt.Originals{}, t0())
		c, _ := res.Check(receipt.CheckSchema)
		var got []string
		for _, e := range c.Errors {
			got = append(got, e.Field+" "+e.Rule)
		}
		if diff := cmp.Diff([]string{tc.field + " jcs"}, got); c.Status != receipt.CheckFailed || diff != "" {
			t.Errorf("%s: schema check %s, errors (-want +got):\n%s", name, c.Status, diff)
		}
	}
}
