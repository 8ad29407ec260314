// Package mutanttest proves that a conformance suite fails what it claims
// to check: a test runs the suite against a deliberately broken
// implementation in a child process (the test binary, run again for that
// one test), and fails when the suite does not fail one of its subtests
// there. The store suites of routertest, x402test, receipttest and
// reputationtest are checked so.
//
//	func TestStoreSuite_catchesX(t *testing.T) {
//		if mutanttest.Child(t) {
//			suite.TestStore(t, newBrokenStore) // fails, as it should
//			return
//		}
//		mutanttest.MustFail(t, "what is broken")
//	}
package mutanttest

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// env names the test a child process runs the broken suite in.
const env = "VOUCH_MUTANT_TEST"

// Child reports whether t runs in the child process that [MustFail]
// started for it, where the test runs the suite on the broken
// implementation.
func Child(t *testing.T) bool {
	return os.Getenv(env) == t.Name()
}

// MustFail runs t's test again in a child process, where [Child] is true,
// and fails t unless the suite failed one of its subtests there: a child
// that passed, crashed or could not start proves nothing. broken says
// what the implementation gets wrong, for the failure message.
func MustFail(t *testing.T, broken string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err == nil || !bytes.Contains(out, []byte("--- FAIL: "+t.Name()+"/")) {
		if len(out) > 600 {
			out = out[len(out)-600:]
		}
		t.Errorf("the conformance suite did not fail a broken implementation (%s) in a subtest (%v); it should\n%s", broken, err, out)
	}
}
