package router_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// contractCases returns the table. Early quorum and fail_hard cut the
// replicas still running; so that every target sees the same labels, the
// workers an early decision may cut are ones that never answer on their
// own (Hang, or Slow by an hour), never instant ones racing the decision:
// in each case, the outcome is open until every instant worker has voted.
func contractCases() []contractCase {
	V, I := routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictInvalid)
	R, N := routertest.Verdict(router.VerdictRetry), routertest.Verdict(router.VerdictNeedsSpec)
	T, F := routertest.Verdict(router.VerdictTrue), routertest.Verdict(router.VerdictFalse)
	E, H := routertest.Fail(errors.New("worker down")), routertest.Hang()
	S := routertest.Slow(V, time.Hour)
	A, B := routertest.Answer("Paris"), routertest.Answer(map[string]int{"sum": 6})
	lV, lI, lN := router.Label(router.VerdictValid), router.Label(router.VerdictInvalid), router.Label(router.VerdictNeedsSpec)
	lT, lF, lR := router.Label(router.VerdictTrue), router.Label(router.VerdictFalse), router.Label(router.VerdictRetry)
	lOK, lE, lTO, lC := router.LabelOK, router.LabelError, router.LabelTimeout, router.LabelCancelled
	fastOnly := func(ws []router.Worker) []router.Session {
		ss := routertest.Sessions(1, len(ws), ws...)
		for i := range ss {
			ss[i].Tiers = []router.Tier{router.TierFast}
		}
		return ss
	}
	const claim = `"claim":{"type":"summary","output":"Paris is the capital of France."}`

	return append([]contractCase{
		// Every operation, valid input.
		{name: "delegate_v1/ok", workers: []router.Worker{A},
			call: dv1(`{"session_id":1,"task_request_input":"capital of France?"}`),
			want: contractWant{calls: 1, check: func(t *testing.T, resp any) {
				if r := resp.(*router.DelegateV1Response); r.SessionID != 1 || r.TaskResultOutput != "Paris" || r.TaskID == "" {
					t.Errorf("response = %+v, want session 1, output Paris and a task id", r)
				}
			}}},
		{name: "validate_v1/ok", workers: []router.Worker{V},
			call: vv1(`{"session_id":1,"task_request_input":"capital of France?","task_result_output":"Paris","acceptance_criteria":["accuracy"]}`),
			want: contractWant{verdict: router.VerdictValid, calls: 1}},
		{name: "delegate_v2/ok", workers: []router.Worker{B},
			call: dv2(`{"session_id":1,"objective":"add the numbers","input":"1 2 3","execution":{"mode":"tools","max_steps":3},"policy":{"tier":"fast","timeout_ms":5000}}`),
			want: contractWant{calls: 1, check: func(t *testing.T, resp any) {
				r := resp.(*router.DelegateV2Response)
				if !jsonSame(r.Result, `{"sum":6}`) || len(r.Evidence.Steps) != 1 || r.Evidence.Configuration.MaxSteps != 3 {
					t.Errorf("response = %+v, want result {\"sum\":6}, one step, max_steps 3", r)
				}
			}}},
		{name: "validate_v2/INVALID is a result", workers: []router.Worker{I},
			call: vv2(`{"session_id":1,"request_id":"r-1",` + claim + `,"policy":{"tier":"safe","rules":["consistency"]}}`),
			want: contractWant{verdict: router.VerdictInvalid, calls: 1, check: func(t *testing.T, resp any) {
				if r := resp.(*router.ValidateV2Response); r.RequestID != "r-1" || len(r.Evidence.Runs) != 1 {
					t.Errorf("response = %+v, want request_id r-1 and one run", r)
				}
			}}},
		// Validate v2 with policy.redundancy 3 (docs/INTERFACE.md, 5.5) runs three
		// replicas, session_id first, and reports each run.
		// The VALID sessions answer after the INVALID one, so that early
		// quorum never cuts it short: all three runs answer.
		{name: "validate_v2/redundancy 3", workers: []router.Worker{routertest.Slow(V, 100*time.Millisecond), I, routertest.Slow(V, 100*time.Millisecond), routertest.Slow(V, 100*time.Millisecond)},
			call: vv2(`{"session_id":2,"request_id":"r-2",` + claim + `,"policy":{"redundancy":3}}`),
			want: contractWant{verdict: router.VerdictValid, calls: 3, check: func(t *testing.T, resp any) {
				r := resp.(*router.ValidateV2Response)
				if len(r.Evidence.Runs) != 3 || r.Evidence.Runs[0].SessionID != 2 || r.Evidence.Runs[0].Label != lI {
					t.Errorf("runs = %+v, want 3, the first on session 2 (INVALID)", r.Evidence.Runs)
				}
				if r.RequestID != "r-2" || r.Confidence != 11.0/16 {
					t.Errorf("request_id %q, confidence %v; want r-2, 11/16 (2 of 3)", r.RequestID, r.Confidence)
				}
			}}},
		// In version 3 consensus.replicas governs; a differing
		// policy.redundancy is noted, not refused.
		{name: "validate_v3/redundancy overridden", workers: []router.Worker{V, V, V},
			call: vv3(`{` + claim + `,"policy":{"redundancy":5},"consensus":{"replicas":3,"disagreement_policy":"return_all"}}`),
			want: contractWant{verdict: router.VerdictValid, labels: []router.Label{lV, lV, lV}, calls: 3, check: func(t *testing.T, resp any) {
				r := resp.(*router.ValidateV3Response)
				if want := []string{"policy.redundancy 5 ignored: consensus.replicas 3 governs"}; !slices.Equal(r.Consensus.Notes, want) {
					t.Errorf("consensus.notes = %q, want %q", r.Consensus.Notes, want)
				}
			}}},
		{name: "delegate_v3/agree", workers: []router.Worker{A, A, A},
			call: dv3(`{"objective":"capital of France?","consensus":{"replicas":3,"disagreement_policy":"return_all"}}`),
			want: contractWant{labels: []router.Label{lOK, lOK, lOK}, calls: 3, check: func(t *testing.T, resp any) {
				if r := resp.(*router.DelegateV3Response); !jsonSame(r.Result, `"Paris"`) || r.Consensus.Agreement != 1 {
					t.Errorf("response = %+v, want result Paris with agreement 1", r)
				}
			}}},
		{name: "validate_v3/agree", workers: []router.Worker{V, V, V},
			call: vv3(`{` + claim + `,"consensus":{"replicas":3,"session_pool":["1","2","3"],"disagreement_policy":"fail_hard"}}`),
			want: contractWant{verdict: router.VerdictValid, labels: []router.Label{lV, lV, lV}, calls: 3}},
		{name: "factcheck/agree", workers: []router.Worker{T, T, T},
			call: fc3(`{"claim":"Paris is the capital of France.","mode":"standard","consensus":{"replicas":3,"disagreement_policy":"return_all"}}`),
			want: contractWant{verdict: router.VerdictTrue, labels: []router.Label{lT, lT, lT}, calls: 3}},

		// Invalid input: 400 naming every failing field by JSON path, and
		// no worker runs.
		{name: "delegate_v1/invalid", workers: []router.Worker{A},
			call: dv1(`{"session_id":1,"web_url":"ftp://example.com"}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"task_request_input", "web_url"}}},
		{name: "validate_v1/invalid", workers: []router.Worker{V},
			call: vv1(`{"task_request_input":"q","acceptance_criteria":[""]}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"session_id", "task_result_output", "acceptance_criteria[0]"}}},
		{name: "delegate_v2/invalid", workers: []router.Worker{B},
			call: dv2(`{"session_id":1,"execution":{"max_steps":10001},"policy":{"tier":"adaptive"}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"objective", "execution.max_steps", "policy.tier"}}},
		{name: "validate_v2/invalid", workers: []router.Worker{V},
			call: vv2(`{"session_id":1,"claim":{"output":"x"},"policy":{"redundancy":2}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"claim.type", "policy.redundancy"}}},
		{name: "delegate_v3/invalid", workers: []router.Worker{A, A, A},
			call: dv3(`{"objective":"o","consensus":{"replicas":4,"disagreement_policy":"coin_toss"}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"consensus.replicas", "consensus.disagreement_policy"}}},
		{name: "validate_v3/invalid", workers: []router.Worker{V, V, V},
			call: vv3(`{` + claim + `,"policy":{"redundancy":2},"consensus":{"replicas":3,"aggregation":"median"}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"policy.redundancy", "consensus.aggregation"}}},
		{name: "factcheck/invalid", workers: []router.Worker{T, T, T},
			call: fc3(`{"mode":"psychic","consensus":{"replicas":3,"session_pool":[1,1]}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"claim", "mode", "consensus.session_pool"}}},

		// Sessions.
		{name: "validate_v2/unknown session", workers: []router.Worker{V},
			call: vv2(`{"session_id":9,` + claim + `}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"session_id"}}},
		{name: "delegate_v2/tier not served", workers: []router.Worker{B}, sessions: fastOnly,
			call: dv2(`{"session_id":1,"objective":"o","policy":{"tier":"oracle"}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"policy.tier"}}},
		{name: "validate_v3/unknown session in pool", workers: []router.Worker{V, V, V},
			call: vv3(`{` + claim + `,"consensus":{"replicas":3,"session_pool":[1,42,2,43]}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"consensus.session_pool[1]", "consensus.session_pool[3]"}}},
		{name: "factcheck/insufficient sessions", workers: []router.Worker{T, T, T},
			call: fc3(`{"claim":"c","consensus":{"replicas":5}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"consensus.replicas"}}},
		{name: "validate_v3/insufficient sessions in tier", workers: []router.Worker{V, V, V}, sessions: fastOnly,
			call: vv3(`{` + claim + `,"policy":{"tier":"oracle"},"consensus":{"replicas":1}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"consensus.replicas"}}},

		// Disagreement policies.
		{name: "validate_v3/return_all/majority", workers: []router.Worker{V, I, V},
			call: vv3(`{` + claim + `,"consensus":{"replicas":3,"disagreement_policy":"return_all"}}`),
			want: contractWant{verdict: router.VerdictValid, labels: []router.Label{lV, lI, lV}, low: true, calls: 3}},
		{name: "validate_v3/return_all/no majority", workers: []router.Worker{V, I, N},
			call: vv3(`{` + claim + `,"consensus":{"replicas":3,"disagreement_policy":"return_all"}}`),
			want: contractWant{verdict: "", labels: []router.Label{lV, lI, lN}, low: true, calls: 3, check: func(t *testing.T, resp any) {
				if r := resp.(*router.ValidateV3Response); r.Confidence != 0 || len(r.Evidence.Runs) != 3 {
					t.Errorf("response = %+v, want confidence 0 and all three runs", r)
				}
			}}},
		{name: "validate_v3/return_all/all fail", workers: []router.Worker{E, E, E},
			call: vv3(`{` + claim + `,"consensus":{"replicas":3,"disagreement_policy":"return_all"}}`),
			want: contractWant{verdict: "", labels: []router.Label{lE, lE, lE}, low: true, calls: 3}},
		{name: "validate_v3/fail_hard/disagree", workers: []router.Worker{V, I, H},
			call: vv3(`{` + claim + `,"consensus":{"replicas":3,"disagreement_policy":"fail_hard"}}`),
			want: contractWant{status: 409, code: "disagreement", labels: []router.Label{lV, lI, lC}, calls: 3, cancelled: 1}},
		{name: "delegate_v3/fail_hard/disagree", workers: []router.Worker{A, B, H},
			call: dv3(`{"objective":"o","consensus":{"replicas":3,"disagreement_policy":"fail_hard"}}`),
			want: contractWant{status: 409, code: "disagreement", labels: []router.Label{lOK, lOK, lC}, calls: 3, cancelled: 1}},
		{name: "factcheck/fail_hard/agree", workers: []router.Worker{F, F, F},
			call: fc3(`{"claim":"The sun orbits the earth.","consensus":{"replicas":3,"disagreement_policy":"fail_hard"}}`),
			want: contractWant{verdict: router.VerdictFalse, labels: []router.Label{lF, lF, lF}, calls: 3}},
		// best_effort decides as soon as no vote still out could change
		// the outcome; with hung replicas in the race, every instant vote
		// is needed, and the hung ones end at their deadline.
		{name: "validate_v3/best_effort/largest group", workers: []router.Worker{V, V, I, H, H},
			call: vv3(`{` + claim + `,"policy":{"timeout_ms":1000},"consensus":{"replicas":5,"disagreement_policy":"best_effort"}}`),
			want: contractWant{verdict: router.VerdictValid, labels: []router.Label{lV, lV, lI, lTO, lTO}, low: true, calls: 5, cancelled: 2}},
		{name: "validate_v3/best_effort/tie goes to caution", workers: []router.Worker{V, I, H},
			call: vv3(`{` + claim + `,"policy":{"timeout_ms":1000},"consensus":{"replicas":3}}`),
			want: contractWant{verdict: router.VerdictInvalid, labels: []router.Label{lV, lI, lTO}, low: true, calls: 3, cancelled: 1}},
		{name: "validate_v3/return_all/RETRY wins", workers: []router.Worker{R, I, R},
			call: vv3(`{` + claim + `,"consensus":{"replicas":3,"disagreement_policy":"return_all"}}`),
			want: contractWant{verdict: router.VerdictRetry, labels: []router.Label{lR, lI, lR}, low: true, calls: 3}},
		{name: "factcheck/best_effort/all fail", workers: []router.Worker{E, E, E},
			call: fc3(`{"claim":"c","consensus":{"replicas":3}}`),
			want: contractWant{status: 502, code: "all_replicas_failed", labels: []router.Label{lE, lE, lE}, calls: 3}},

		// Stragglers: an early quorum cancels the replicas still running.
		{name: "validate_v3/early quorum cancels a hung replica", workers: []router.Worker{V, V, H},
			call: vv3(`{` + claim + `,"consensus":{"replicas":3}}`),
			want: contractWant{verdict: router.VerdictValid, labels: []router.Label{lV, lV, lC}, calls: 3, cancelled: 1}},
		{name: "validate_v3/early quorum of 3 in 5", workers: []router.Worker{V, S, V, H, V},
			call: vv3(`{` + claim + `,"consensus":{"replicas":5,"disagreement_policy":"best_effort"}}`),
			want: contractWant{verdict: router.VerdictValid, labels: []router.Label{lV, lC, lV, lC, lV}, calls: 5, cancelled: 2}},
		{name: "delegate_v3/early quorum", workers: []router.Worker{A, S, A},
			call: dv3(`{"objective":"capital of France?","consensus":{"replicas":3}}`),
			want: contractWant{labels: []router.Label{lOK, lC, lOK}, calls: 3, cancelled: 1}},
		{name: "factcheck/early quorum", workers: []router.Worker{H, T, T},
			call: fc3(`{"claim":"c","consensus":{"replicas":3}}`),
			want: contractWant{verdict: router.VerdictTrue, labels: []router.Label{lC, lT, lT}, calls: 3, cancelled: 1}},
		// return_all waits for every replica: the hung one runs to its
		// deadline, and its TIMEOUT is a non-vote.
		{name: "validate_v3/return_all/straggler times out", workers: []router.Worker{V, H, V},
			call: vv3(`{` + claim + `,"policy":{"timeout_ms":1000},"consensus":{"replicas":3,"disagreement_policy":"return_all"}}`),
			want: contractWant{verdict: router.VerdictValid, labels: []router.Label{lV, lTO, lV}, calls: 3, cancelled: 1}},

		// Factcheck v1: version 3's fact check under best_effort, with
		// policy.redundancy (3 by default, or 5) and session_pool at the
		// top. Its early quorum cuts the hung replicas.
		{name: "factcheck_v1/agree", workers: []router.Worker{T, T, H},
			call: fc1(`{"claim":"Paris is the capital of France.","mode":"realtime","request_id":"f-1","policy":{"tier":"safe"}}`),
			want: contractWant{verdict: router.VerdictTrue, labels: []router.Label{lT, lT, lC}, calls: 3, cancelled: 1, check: func(t *testing.T, resp any) {
				if r := resp.(*router.FactcheckResponse); r.RequestID != "f-1" || r.Confidence == 0 || len(r.Reasons) == 0 {
					t.Errorf("response = %+v, want request_id f-1, a confidence and the winners' reasons", r)
				}
			}}},
		{name: "factcheck_v1/session_pool order, ids as strings", workers: []router.Worker{H, T, T},
			call: fc1(`{"claim":"c","session_pool":["3","2",1]}`),
			want: contractWant{verdict: router.VerdictTrue, labels: []router.Label{lT, lT, lC}, calls: 3, cancelled: 1, check: func(t *testing.T, resp any) {
				var got []router.SessionID
				for _, r := range resp.(*router.FactcheckResponse).Evidence.Runs {
					got = append(got, r.SessionID)
				}
				if want := []router.SessionID{3, 2, 1}; !slices.Equal(got, want) {
					t.Errorf("runs on sessions %v, want %v (the pool's order)", got, want)
				}
			}}},
		{name: "factcheck_v1/redundancy 5", workers: []router.Worker{F, H, F, H, F},
			call: fc1(`{"claim":"The sun orbits the earth.","policy":{"redundancy":5}}`),
			want: contractWant{verdict: router.VerdictFalse, labels: []router.Label{lF, lC, lF, lC, lF}, calls: 5, cancelled: 2}},
		{name: "factcheck_v1/disagreement is low confidence", workers: []router.Worker{T, F, F, H, H},
			call: fc1(`{"claim":"c","policy":{"redundancy":5,"timeout_ms":1000}}`),
			want: contractWant{verdict: router.VerdictFalse, labels: []router.Label{lT, lF, lF, lTO, lTO}, low: true, calls: 5, cancelled: 2}},
		{name: "factcheck_v1/invalid", workers: []router.Worker{T, T, T},
			call: fc1(`{"mode":"psychic","policy":{"redundancy":1,"tier":"adaptive"},"session_pool":[1,1]}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"claim", "mode", "policy.redundancy", "policy.tier", "session_pool"}}},
		{name: "factcheck_v1/unknown session in pool", workers: []router.Worker{T, T, T},
			call: fc1(`{"claim":"c","session_pool":[1,"42",2]}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"session_pool[1]"}}},
		{name: "factcheck_v1/insufficient sessions", workers: []router.Worker{T, T, T},
			call: fc1(`{"claim":"c","policy":{"redundancy":5}}`),
			want: contractWant{status: 400, code: "invalid_request", fields: []string{"policy.redundancy"}}},
		{name: "factcheck_v1/all fail", workers: []router.Worker{E, E, E},
			call: fc1(`{"claim":"c"}`),
			want: contractWant{status: 502, code: "all_replicas_failed", labels: []router.Label{lE, lE, lE}, calls: 3}},
	}, numericCases()...)
}
