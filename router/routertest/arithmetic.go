package routertest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"github.com/vouchkit/vouch/router"
)

var (
	// product is "A * B" anywhere in a delegation's input; equation is a
	// claim that reads "A * B = C" and nothing else.
	product  = regexp.MustCompile(`(-?\d+) \* (-?\d+)`)
	equation = regexp.MustCompile(`^(-?\d+) \* (-?\d+) = (-?\d+)$`)
)

// Arithmetic returns a Worker that knows integer multiplication, so that a
// test can send claims whose truth it knows without scripting each one:
//
//   - a validate job whose claimed output (or a factcheck job whose
//     statement) reads "A * B = C", and nothing more, gets VALID (TRUE) when A×B is C and
//     INVALID (FALSE) otherwise, at confidence 0.95, with a reason such as
//     "17 * 3 is 51, not 50";
//   - one with no such equation gets NEEDS_SPEC at confidence 0.5 (a
//     factcheck job, FALSE);
//   - a delegate job whose input is a string holding "A * B" (after any
//     leading text) gets the product as its output, or "cannot compute
//     ..." when it holds none (an object or array input holds none).
//
// The integers may have any size and a sign.
func Arithmetic() router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		if job.Kind == router.KindDelegate {
			s, _ := job.Input.String()
			m := product.FindStringSubmatch(s)
			if m == nil {
				if i := strings.IndexFunc(s, func(r rune) bool { return '0' <= r && r <= '9' }); i >= 0 {
					s = s[i:]
				}
				return &router.Result{Output: "cannot compute " + s}, nil
			}
			return &router.Result{Output: mul(m[1], m[2]).String()}, nil
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
		m := equation.FindStringSubmatch(strings.TrimSpace(text))
		if m == nil {
			return &router.Result{Verdict: none, Confidence: 0.5, Reasons: []string{"no equation to check"}}, nil
		}
		a, b, c := m[1], m[2], m[3]
		p, _ := new(big.Int).SetString(c, 10)
		if got := mul(a, b); got.Cmp(p) != 0 {
			return &router.Result{Verdict: no, Confidence: 0.95, Reasons: []string{fmt.Sprintf("%s * %s is %s, not %s", norm(a), norm(b), got, p)}}, nil
		}
		return &router.Result{Verdict: yes, Confidence: 0.95, Reasons: []string{fmt.Sprintf("%s * %s = %s holds", norm(a), norm(b), p)}}, nil
	})
}

// mul returns the product of two decimal integers.
func mul(a, b string) *big.Int {
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	return x.Mul(x, y)
}

// norm writes a decimal integer without leading zeros.
func norm(s string) string {
	x, _ := new(big.Int).SetString(s, 10)
	return x.String()
}
