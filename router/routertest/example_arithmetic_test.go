package routertest_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// Arithmetic judges claims whose truth the test knows, and computes the
// products a delegation asks for.
func ExampleArithmetic() {
	w := routertest.Arithmetic()
	ctx := context.Background()
	for _, claim := range []string{"17 * 3 = 51", "17 * 3 = 50", "the sky is blue"} {
		out, _ := json.Marshal(claim)
		res, err := w.Work(ctx, &router.Job{Kind: router.KindValidate, Claim: &router.Claim{Type: "tool_output", Output: out}})
		fmt.Println(res.Verdict, res.Confidence, res.Reasons, err)
	}
	res, err := w.Work(ctx, &router.Job{Kind: router.KindDelegate, Input: router.NewStringInput("compute 12 * -4")})
	fmt.Println(res.Output, err)
	// Output:
	// VALID 0.95 [17 * 3 = 51 holds] <nil>
	// INVALID 0.95 [17 * 3 is 51, not 50] <nil>
	// NEEDS_SPEC 0.5 [no equation to check] <nil>
	// -48 <nil>
}
