package trust_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// A router call that failed is no vote, whatever the runs its problem
// carries say. A remote router answers every version 3 validation 502
// all_replicas_failed, with evidence naming its one run VALID: adaptive
// answers RETRY with no run answered, as fast and safe fail the call,
// rather than count the failures as VALID votes.
func TestService_Call_adaptiveFailedCallIsNoVote(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req router.ValidateV3Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Consensus.SessionPool) != 1 {
			http.Error(w, "want a version 3 validation on one session", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, `{"title":"Bad Gateway","status":502,"code":"all_replicas_failed","detail":"no replica answered",`+
			`"extra":{"runs":[{"replica":0,"session_id":%d,"task_id":"t","label":"VALID","confidence":0.99,"latency_ms":1}]}}`,
			req.Consensus.SessionPool[0])
	}))
	defer srv.Close()
	rc, err := router.NewClient(srv.URL, router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(rc, trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithoutReputation())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Call(t.Context(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyAdaptive,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("x"), ClaimedResult: trust.JSON("x")}})
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		Status   trust.Status
		Answered int
		Labels   map[router.Label]int
	}
	got := answer{Status: resp.Status, Answered: resp.Evidence.Answered, Labels: map[router.Label]int{}}
	for _, l := range resp.Evidence.Verdicts {
		got.Labels[l]++
	}
	want := answer{Status: trust.StatusRetry, Labels: map[router.Label]int{router.LabelError: len(resp.Evidence.Verdicts)}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("adaptive over a router whose calls all fail (-want +got):\n%s", d)
	}
}
