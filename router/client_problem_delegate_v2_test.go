package router_test

import (
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// A version 1 or 2 delegation on one session that gives no answer is a
// 502 or 504 carrying its run in extra, as a version 1 or 2 validation's
// is. That run is held to the contract as a validation's is: a label a
// delegation does not give, or a confidence outside [0, 1], is no record
// of the router's run.
func TestClient_refusesDelegationV2ProblemEvidenceOutsideTheContract(t *testing.T) {
	const good = `{"runs":[{"replica":0,"session_id":1,"task_id":"a","label":"ERROR","confidence":0,"latency_ms":1,"error":"boom"}]}`
	for _, tc := range []struct {
		name  string
		v1    bool
		extra string
		want  string // "" for the router's *Error
	}{
		{"within the contract", false, good, ""},
		{"a run's label unknown", false, strings.Replace(good, `"label":"ERROR"`, `"label":"BANANA"`, 1), `label "BANANA"`},
		{"a verdict as a run's label", false, strings.Replace(good, `"label":"ERROR"`, `"label":"VALID"`, 1), `label "VALID"`},
		{"a confidence above 1", false, strings.Replace(good, `"confidence":0`, `"confidence":9`, 1), "confidence 9"},
		{"not an object", false, `"no replica answered"`, "extra"},
		{"version 1 within the contract", true, good, ""},
		{"version 1 a run's label unknown", true, strings.Replace(good, `"label":"ERROR"`, `"label":"BANANA"`, 1), `label "BANANA"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := badGatewayClient(t, "session 1: boom", tc.extra)
			var err error
			if tc.v1 {
				_, err = c.DelegateV1(t.Context(), &router.DelegateV1Request{SessionID: 1, TaskRequestInput: "2 * 3"})
			} else {
				_, err = c.DelegateV2(t.Context(), &router.DelegateV2Request{SessionID: 1, DelegateTask: router.DelegateTask{Objective: "2 * 3"}})
			}
			checkBadGateway(t, err, tc.want)
		})
	}
}
