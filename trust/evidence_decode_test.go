package trust

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// Evidence a router problem carries in extra that does not decode fails
// the call, naming the member, rather than being read as no runs or as
// the runs it decoded before the fault: a router.Service other than the
// Client (an in-process fake, a host's own) has no one else to check it.
func TestService_Call_evidenceThatDoesNotDecode(t *testing.T) {
	const runs = `[{"replica":0,"session_id":4,"label":"VALID","confidence":0.9},{"replica":1,"session_id":5,"label":"INVALID","confidence":"high"}]`
	for _, tc := range []struct {
		name, extra, want string
	}{
		{"not an object", `"replicas disagree"`, "extra"},
		{"a run's confidence a string", `{"runs":` + runs + `,"consensus":{"replicas":5,"agreement":0.2,"verdicts":["VALID","INVALID","CANCELLED","CANCELLED","CANCELLED"]}}`, "runs.confidence"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problem.New(http.StatusConflict, problem.CodeDisagreement, "replicas disagree")
			p.Extra = []byte(tc.extra)
			rs := &scripted{validate: map[int]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){
				5: func(*router.ValidateV3Request) (*router.ValidateV3Response, error) { return nil, p },
			}}
			s, _ := New(rs)
			resp, err := s.Call(context.Background(), validation(PolicyOracle))
			if !errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Call = %+v, %v; want an error wrapping router.ErrMalformedResponse naming %q", resp, err, tc.want)
			}
		})
	}
}

// An adaptive call's replica whose problem carries evidence that does
// not decode is a failed run whose error names the member, as it is over
// the Client, which refuses such evidence: a disagreement's run whose
// confidence does not decode is not counted as the vote it would decode
// to.
func TestService_Call_adaptiveEvidenceThatDoesNotDecode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		code   problem.Code
		extra  string
		want   string
	}{
		{"a disagreement's run", http.StatusConflict, problem.CodeDisagreement,
			`{"runs":[{"replica":0,"session_id":1,"label":"VALID","confidence":"sure"}]}`, "runs.confidence"},
		{"a failure's evidence not an object", http.StatusBadGateway, problem.CodeAllReplicasFailed, `"boom"`, "extra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := problem.New(tc.status, tc.code, "no vote")
			p.Extra = []byte(tc.extra)
			sc := map[router.SessionID]func(*router.ValidateV3Request) (*router.ValidateV3Response, error){
				1: func(*router.ValidateV3Request) (*router.ValidateV3Response, error) { return nil, p },
			}
			for id := router.SessionID(2); id <= 5; id++ {
				sc[id] = one(0.9, router.Label(router.VerdictValid))
			}
			s, err := New(&scripted{bySession: sc}, WithSessionPool(1, 2, 3, 4, 5))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := s.Call(context.Background(), validation(PolicyAdaptive))
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Evidence.Verdicts) == 0 || resp.Evidence.Verdicts[0] != router.LabelError {
				t.Fatalf("verdicts %v, want the first run ERROR", resp.Evidence.Verdicts)
			}
			d := resp.Evidence.Disagreements
			if len(d) == 0 || d[0].SessionID != 1 || !strings.Contains(d[0].Reason, "malformed response") || !strings.Contains(d[0].Reason, tc.want) {
				t.Errorf("disagreements %+v, want session 1's naming the malformed %s", d, tc.want)
			}
		})
	}
}
