package routertest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/vouchkit/vouch/router"
)

// Arithmetic returns a Worker that knows integer multiplication, so that a
// test can send claims whose truth it knows without scripting each one:
//
//   - a validate job whose claimed output (or a factcheck job whose
//     statement) reads "A * B = C" gets VALID (TRUE) when A×B is C and
//     INVALID (FALSE) otherwise, at confidence 0.95, with a reason such as
//     "17 * 3 is 51, not 50";
//   - one with no such equation gets NEEDS_SPEC at confidence 0.5 (a
//     factcheck job, FALSE);
//   - a delegate job whose input holds "A * B" (after any leading text)
//     gets the product as its output, or "cannot compute ..." when it
//     holds none.
func Arithmetic() router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		var a, b, c int
		if job.Kind == router.KindDelegate {
			s, _ := job.Input.String()
			if i := strings.IndexFunc(s, func(r rune) bool { return '0' <= r && r <= '9' }); i >= 0 {
				s = s[i:]
			}
			if _, err := fmt.Sscanf(s, "%d * %d", &a, &b); err != nil {
				return &router.Result{Output: "cannot compute " + s}, nil
			}
			return &router.Result{Output: fmt.Sprint(a * b)}, nil
		}
		text := job.Statement
		if job.Claim != nil {
			text = string(job.Claim.Output)
			var s string
			if json.Unmarshal(job.Claim.Output, &s) == nil {
				text = s
			}
		}
		yes, no, none := router.VerdictValid, router.VerdictInvalid, router.VerdictNeedsSpec
		if job.Kind == router.KindFactcheck {
			yes, no, none = router.VerdictTrue, router.VerdictFalse, router.VerdictFalse
		}
		if _, err := fmt.Sscanf(strings.TrimSpace(text), "%d * %d = %d", &a, &b, &c); err != nil {
			return &router.Result{Verdict: none, Confidence: 0.5, Reasons: []string{"no equation to check"}}, nil
		}
		if a*b != c {
			return &router.Result{Verdict: no, Confidence: 0.95, Reasons: []string{fmt.Sprintf("%d * %d is %d, not %d", a, b, a*b, c)}}, nil
		}
		return &router.Result{Verdict: yes, Confidence: 0.95, Reasons: []string{fmt.Sprintf("%d * %d = %d holds", a, b, c)}}, nil
	})
}
