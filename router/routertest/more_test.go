package routertest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestArithmetic_falseClaimsAreInvalid: Arithmetic's doc says a claim
// "A * B = C" gets VALID when A×B is C and INVALID otherwise. It should
// judge each claim below INVALID, though text after C (".5", "e3") could
// be ignored, and A*B overflow an int (2^32 * 2^32 "is" 0).
func TestArithmetic_falseClaimsAreInvalid(t *testing.T) {
	for _, claim := range []string{
		"2 * 3 = 6.5",
		"2 * 3 = 6e3",
		"4294967296 * 4294967296 = 0",
	} {
		out, _ := json.Marshal(claim)
		res, err := routertest.Arithmetic().Work(context.Background(), &router.Job{Kind: router.KindValidate, Claim: &router.Claim{Output: out}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict == router.VerdictValid {
			t.Errorf("claim %q: verdict VALID (%v); want INVALID (or NEEDS_SPEC), the equation is false", claim, res.Reasons)
		}
	}
}

// TestArithmetic_delegationKeepsTheSign: a delegation "What is -3 * 4?"
// should be answered -12, the product its own validation accepts
// ("-3 * 4 = -12" is VALID, "-3 * 4 = 12" INVALID), not 12, as a reading
// from the first digit on would answer.
func TestArithmetic_delegationKeepsTheSign(t *testing.T) {
	w := routertest.Arithmetic()
	res, err := w.Work(context.Background(), &router.Job{Kind: router.KindDelegate, Input: router.NewStringInput("What is -3 * 4?")})
	if err != nil {
		t.Fatal(err)
	}
	claim, _ := json.Marshal(fmt.Sprint("-3 * 4 = ", res.Output))
	check, _ := w.Work(context.Background(), &router.Job{Kind: router.KindValidate, Claim: &router.Claim{Output: claim}})
	if res.Output != "-12" {
		t.Errorf("delegation %q answered %v, want -12; Arithmetic itself judges %s %s", "What is -3 * 4?", res.Output, claim, check.Verdict)
	}
	// "after any leading text": leading text that holds a digit too.
	res, _ = w.Work(context.Background(), &router.Job{Kind: router.KindDelegate, Input: router.NewStringInput("In 2024, what is 6 * 7?")})
	if res.Output != "42" {
		t.Errorf("delegation %q answered %v, want 42", "In 2024, what is 6 * 7?", res.Output)
	}
}

// TestSlow_zeroOnDoneContextIsDeterministic: the package doc says "The
// workers are deterministic", and Slow's that if the job's context ends
// first it returns at once with the context's cause. Slow(w, 0) on a
// context already done should do one thing every time (return the
// context's error, as Slow(w, d>0) does). It picks at random between the
// ready timer and the done context: about half the calls reach w.
func TestSlow_zeroOnDoneContextIsDeterministic(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	w := routertest.Slow(rec, 0)
	failed := 0
	const calls = 200
	for range calls {
		if _, err := w.Work(ctx, &router.Job{Kind: router.KindValidate}); err != nil {
			failed++
		}
	}
	if failed != calls {
		t.Errorf("Slow(w, 0) on a done context: %d of %d calls returned the context's error, %d reached w; want every call to return the error", failed, calls, rec.Calls.Load())
	}
}

// TestRecorder_countsAPanicOnANilJob: Recorder's doc says Returned counts
// the calls that have returned, "by panicking too". A call with a nil
// job is counted in Calls, then panics dereferencing the job before the
// deferred count is set up, so Returned stays behind Calls for ever and a
// test waiting for Returned == Calls hangs.
func TestRecorder_countsAPanicOnANilJob(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	func() {
		defer func() { recover() }()
		rec.Work(context.Background(), nil)
	}()
	if c, r := rec.Calls.Load(), rec.Returned.Load(); c != r {
		t.Errorf("after one call that panicked: Calls %d, Returned %d; want them equal", c, r)
	}
}
