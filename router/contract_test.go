package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The contract suite: one table of cases (contractCases), each run on a
// fresh Engine through every target that serves its operation
// (contractTargets): the Engine in-process, and Client → Handler → Engine
// over loopback in each variant the operation has (normal, trial, and
// x402 paying through x402.Transport), by the alias path where the route
// has one (/api/v1/fact-check), and with session ids sent as strings. Every target's answer must meet the case's want, and all answers
// must be equal under go-cmp apart from transport metadata (contractOpts).
//
// To add an operation, add cases whose call is built by contractCall; to
// add a way of running the contract, add a target.

// contractCase is one row of the suite.
type contractCase struct {
	name string
	// workers run sessions 1, 2, ... in pools of their own, so that replica
	// i of a first version 3 call runs on worker i. They must be stateless:
	// each target gets a fresh engine over the same workers, each wrapped
	// in a fresh Recorder.
	workers []router.Worker
	// sessions, if set, builds the sessions from the wrapped workers
	// instead.
	sessions func(ws []router.Worker) []router.Session
	call     contractCall
	want     contractWant
}

// contractWant is what every target's answer must be.
type contractWant struct {
	// status, code and fields (the JSON paths named, in any order)
	// describe an error;
	// a zero status means a response.
	status int
	code   router.Code
	fields []string
	// verdict and labels (consensus.verdicts, v3 only) describe a
	// response; low is consensus.low_confidence.
	verdict router.Verdict
	labels  []router.Label
	low     bool
	// check, if set, checks more of the response.
	check func(t *testing.T, resp any)
	// calls and cancelled are totals over the case's Recorders once the
	// call has returned: the jobs the workers received, and those that
	// observed their context end (early quorum, fail_hard, deadline).
	calls, cancelled int64
}

// contractCall is an operation and the function that calls it.
type contractCall struct {
	op router.Operation
	do func(ctx context.Context, svc router.Service) (any, error)
}

// callJSON returns a call of method with the request decoded from body.
// Writing requests as JSON keeps the table readable; what JSON cannot
// express is the Handler's tests' business.
func callJSON[Req, Resp any](op router.Operation, method func(router.Service, context.Context, *Req) (*Resp, error), body string) contractCall {
	req := new(Req)
	if err := json.Unmarshal([]byte(body), req); err != nil {
		panic(fmt.Sprintf("contract case body %s: %v", body, err))
	}
	return contractCall{op: op, do: func(ctx context.Context, svc router.Service) (any, error) {
		resp, err := method(svc, ctx, req)
		if err != nil {
			return nil, err
		}
		return resp, nil
	}}
}

func dv1(body string) contractCall {
	return callJSON(router.OpDelegateV1, router.Service.DelegateV1, body)
}
func vv1(body string) contractCall {
	return callJSON(router.OpValidateV1, router.Service.ValidateV1, body)
}
func dv2(body string) contractCall {
	return callJSON(router.OpDelegateV2, router.Service.DelegateV2, body)
}
func vv2(body string) contractCall {
	return callJSON(router.OpValidateV2, router.Service.ValidateV2, body)
}
func dv3(body string) contractCall {
	return callJSON(router.OpDelegateV3, router.Service.DelegateV3, body)
}
func vv3(body string) contractCall {
	return callJSON(router.OpValidateV3, router.Service.ValidateV3, body)
}
func fc3(body string) contractCall {
	return callJSON(router.OpFactcheck, router.Service.Factcheck, body)
}
func fc1(body string) contractCall {
	return callJSON(router.OpFactcheckV1, router.Service.FactcheckV1, body)
}

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

	return []contractCase{
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
			want: contractWant{status: 503, code: "insufficient_sessions"}},
		{name: "validate_v3/insufficient sessions in tier", workers: []router.Worker{V, V, V}, sessions: fastOnly,
			call: vv3(`{` + claim + `,"policy":{"tier":"oracle"},"consensus":{"replicas":1}}`),
			want: contractWant{status: 503, code: "insufficient_sessions"}},

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
			want: contractWant{status: 503, code: "insufficient_sessions"}},
		{name: "factcheck_v1/all fail", workers: []router.Worker{E, E, E},
			call: fc1(`{"claim":"c"}`),
			want: contractWant{status: 502, code: "all_replicas_failed", labels: []router.Label{lE, lE, lE}, calls: 3}},
	}
}

// contractTarget is one way of running the contract.
type contractTarget struct {
	name string
	// variant is the variant the target calls; it serves the operations
	// that have it.
	variant router.Variant
	// alias, if set, makes the target call each route by its alias, and
	// serve only the operations that have one.
	alias bool
	// serve returns the Service to call in front of e, and a check to run
	// on each call's error once it returns (nil: none).
	serve func(t *testing.T, e *router.Engine) (router.Service, func(t *testing.T, err error))
}

// serves reports whether the target runs operation op.
func (tg contractTarget) serves(op router.Operation) bool {
	if _, ok := router.RoutePath(op, tg.variant); !ok {
		return false
	}
	return !tg.alias || aliasOf(op, tg.variant) != ""
}

const contractKey = "contract-key"

func contractTargets() []contractTarget {
	var targets []contractTarget
	for _, lc := range []loopbackConfig{
		{variant: router.VariantNormal},
		{variant: router.VariantTrial},
		{variant: router.VariantX402},
		{variant: router.VariantNormal, alias: true},
		{variant: router.VariantTrial, alias: true},
		{variant: router.VariantX402, alias: true},
		{variant: router.VariantNormal, stringIDs: true},
	} {
		targets = append(targets, contractTarget{name: lc.name(), variant: lc.variant, alias: lc.alias,
			serve: func(t *testing.T, e *router.Engine) (router.Service, func(*testing.T, error)) {
				return serveLoopback(t, e, lc)
			}})
	}
	return append([]contractTarget{{name: "engine", variant: router.VariantNormal,
		serve: func(t *testing.T, e *router.Engine) (router.Service, func(*testing.T, error)) { return e, nil }}}, targets...)
}

// loopbackConfig says how a Client calls a Handler over loopback.
type loopbackConfig struct {
	variant   router.Variant
	alias     bool // call each route by its alias
	stringIDs bool // router.WithSessionIDsAsStrings
}

func (lc loopbackConfig) name() string {
	n := "loopback"
	if lc.variant != router.VariantNormal {
		n += "-" + string(lc.variant)
	}
	if lc.alias {
		n += "-alias"
	}
	if lc.stringIDs {
		n += "-string-ids"
	}
	return n
}

// contractPayKey is a throwaway key that pays on the test network of the
// offline facilitator.
const contractPayKey = "4646464646464646464646464646464646464646464646464646464646464646"

// serveLoopback returns a Client of lc's variant calling a Handler in
// front of e over loopback, with retries off so that every call reaches
// the engine once. The Handler knows contractKey, lets trial callers
// through without limit, and prices every x402 route through
// x402.Middleware with the offline facilitator; an x402 Client pays
// through an x402.Transport. The check asserts, for x402, that a
// successful call settled one payment and a failed one none, and, for an
// alias target, that the call went to an alias path.
func serveLoopback(t *testing.T, e *router.Engine, lc loopbackConfig) (router.Service, func(*testing.T, error)) {
	const payTo = "0x000000000000000000000000000000000000dEaD"
	fac := &evm.Facilitator{}
	prices := map[string]x402.Price{}
	for _, rt := range router.Routes() {
		if rt.Variant != router.VariantX402 {
			continue
		}
		offer, err := evm.USDC("base-sepolia", payTo, "$0.001")
		if err != nil {
			t.Fatal(err)
		}
		prices[rt.Method+" "+rt.Path] = x402.Price{Accepts: []x402.PaymentRequirements{offer}}
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac, Routes: prices})
	if err != nil {
		t.Fatal(err)
	}
	h, err := router.NewHandler(e, router.WithX402(mw),
		router.WithAuthenticator(router.KeyAuthenticator(map[string]string{contractKey: "contract"})),
		router.WithTrialLimit(router.TrialLimit{Rate: rate.Inf}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	rt := srv.Client().Transport
	if lc.variant == router.VariantX402 {
		payer, err := evm.NewPayer(contractPayKey)
		if err != nil {
			t.Fatal(err)
		}
		rt = &x402.Transport{Base: rt, Payer: payer}
	}
	var rewritten *atomic.Int64
	if lc.alias {
		a := &aliasTransport{base: rt, aliases: aliases(lc.variant)}
		rt, rewritten = a, &a.rewritten
	}
	opts := []router.ClientOption{router.WithClientVariant(lc.variant), router.WithHTTPClient(&http.Client{Transport: rt}),
		router.WithRetry(router.RetryPolicy{}), router.WithAPIKey(contractKey)}
	if lc.stringIDs {
		opts = append(opts, router.WithSessionIDsAsStrings())
	}
	c, err := router.NewClient(srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, func(t *testing.T, err error) {
		if lc.variant == router.VariantX402 {
			want := 1
			if err != nil {
				want = 0 // the Middleware settles only answers below 400
			}
			if got := len(fac.Settlements()); got != want {
				t.Errorf("settlements = %d, want %d (call error: %v)", got, want, err)
			}
		}
		if rewritten != nil && rewritten.Load() == 0 {
			t.Errorf("no request went to an alias path")
		}
	}
}

// aliases maps the canonical path of each route of variant v that has an
// alias to that alias.
func aliases(v router.Variant) map[string]string {
	m := map[string]string{}
	for _, rt := range router.Routes() {
		if rt.Alias && rt.Variant == v {
			canonical, _ := router.RoutePath(rt.Op, v)
			m[canonical] = rt.Path
		}
	}
	return m
}

// aliasOf returns the alias of op's route in variant v, or "".
func aliasOf(op router.Operation, v router.Variant) string {
	p, _ := router.RoutePath(op, v)
	return aliases(v)[p]
}

// aliasTransport sends each request whose path has an alias to the alias,
// counting them.
type aliasTransport struct {
	base      http.RoundTripper
	aliases   map[string]string
	rewritten atomic.Int64
}

func (a *aliasTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	alias, ok := a.aliases[req.URL.Path]
	if !ok {
		return a.base.RoundTrip(req)
	}
	a.rewritten.Add(1)
	r := req.Clone(req.Context())
	r.URL.Path = alias
	return a.base.RoundTrip(r)
}

// contractOpts ignore what legitimately differs between two runs of one
// case: task ids are random and latencies are measured. Nil and empty
// slices are the same on the wire, and JSON values compare by meaning.
var contractOpts = cmp.Options{
	cmpopts.IgnoreFields(router.Run{}, "TaskID", "LatencyMS"),
	cmpopts.IgnoreFields(router.DelegateV1Response{}, "TaskID"),
	cmpopts.IgnoreFields(router.ValidateV1Response{}, "TaskID"),
	cmpopts.IgnoreFields(router.DelegateV2Response{}, "TaskID"),
	cmpopts.IgnoreFields(router.DelegateV3Response{}, "TaskID"),
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() != reflect.TypeFor[json.RawMessage]() },
		cmpopts.EquateEmpty()),
	cmp.Comparer(func(a, b json.RawMessage) bool { return jsonSame(a, string(b)) }),
}

// contractError is the part of an *router.Error the targets must agree
// on: status, code, detail, field errors and the evidence in Extra. The
// type URI, instance and request id are transport metadata.
type contractError struct {
	Status   int
	Code     router.Code
	Detail   string
	Fields   []router.FieldError
	Evidence *contractEvidence
}

// contractEvidence is the Extra of a failed version 3 call.
type contractEvidence struct {
	Runs      []router.Run              `json:"runs"`
	Consensus *router.ConsensusResponse `json:"consensus"`
}

func TestContract(t *testing.T) {
	for _, tc := range contractCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var answers []any
			var names []string
			for _, tg := range contractTargets() {
				if !tg.serves(tc.call.op) {
					continue
				}
				recs := make([]*routertest.Recorder, len(tc.workers))
				ws := make([]router.Worker, len(tc.workers))
				for i, w := range tc.workers {
					recs[i] = routertest.NewRecorder(w)
					ws[i] = recs[i]
				}
				sessions := routertest.Sessions(1, len(ws), ws...)
				if tc.sessions != nil {
					sessions = tc.sessions(ws)
				}
				e, err := router.NewEngine(sessions)
				if err != nil {
					t.Fatal(err)
				}
				svc, after := tg.serve(t, e)

				resp, err := tc.call.do(context.Background(), svc)
				answer := checkContract(t, tg.name, tc.want, resp, err, recs)
				if after != nil {
					after(t, err)
				}
				answers, names = append(answers, answer), append(names, tg.name)
			}
			if len(answers) < 2 {
				t.Fatalf("case ran on %v only; every case needs the engine and a loopback target", names)
			}
			for i := 1; i < len(answers); i++ {
				if diff := cmp.Diff(answers[0], answers[i], contractOpts); diff != "" {
					t.Errorf("%s and %s answer differently (-%s +%s):\n%s", names[0], names[i], names[0], names[i], diff)
				}
			}
		})
	}
}

// checkContract checks one target's answer against want and returns the
// value the targets must agree on: the response, or a contractError.
func checkContract(t *testing.T, target string, want contractWant, resp any, err error, recs []*routertest.Recorder) any {
	t.Helper()
	var calls, cancelled int64
	for _, r := range recs {
		calls += r.Calls.Load()
		cancelled += r.Cancelled.Load()
	}
	if calls != want.calls || cancelled != want.cancelled {
		t.Errorf("%s: workers got %d jobs and observed %d cancellations, want %d and %d",
			target, calls, cancelled, want.calls, want.cancelled)
	}

	if err != nil {
		var p *router.Error
		if !errors.As(err, &p) {
			t.Fatalf("%s: error %v (%T), want a *router.Error", target, err, err)
		}
		got := contractError{Status: p.Status, Code: p.Code, Detail: p.Detail, Fields: p.Errors}
		if len(p.Extra) > 0 {
			got.Evidence = new(contractEvidence)
			if err := json.Unmarshal(p.Extra, got.Evidence); err != nil {
				t.Errorf("%s: error extra %s: %v", target, p.Extra, err)
			}
		}
		var paths []string
		for _, f := range p.Errors {
			paths = append(paths, f.Field)
		}
		slices.Sort(paths) // the targets must agree on the order; the want names the set
		if p.Status != want.status || p.Code != want.code || !slices.Equal(paths, slices.Sorted(slices.Values(want.fields))) {
			t.Errorf("%s: error = %d %s %q (%s), want %d %s %q", target, p.Status, p.Code, paths, p.Detail,
				want.status, want.code, want.fields)
		}
		if want.labels != nil {
			if got.Evidence == nil || got.Evidence.Consensus == nil {
				t.Errorf("%s: error carries no consensus evidence: %s", target, p.Extra)
			} else if !slices.Equal(got.Evidence.Consensus.Verdicts, want.labels) || len(got.Evidence.Runs) != len(want.labels) {
				t.Errorf("%s: evidence verdicts = %v with %d runs, want %v", target,
					got.Evidence.Consensus.Verdicts, len(got.Evidence.Runs), want.labels)
			}
		}
		return got
	}

	if want.status != 0 {
		t.Errorf("%s: response %+v, want error %d %s", target, resp, want.status, want.code)
		return resp
	}
	verdict, cons, runs := contractSummary(resp)
	if verdict != want.verdict {
		t.Errorf("%s: verdict = %q, want %q", target, verdict, want.verdict)
	}
	if cons != nil {
		if !slices.Equal(cons.Verdicts, want.labels) || len(runs) != len(want.labels) || cons.Replicas != len(want.labels) {
			t.Errorf("%s: consensus = %+v with %d runs, want verdicts %v", target, cons, len(runs), want.labels)
		}
		if cons.LowConfidence != want.low || cons.Strategy != router.AggregationMajority {
			t.Errorf("%s: consensus = %+v, want low_confidence %v and strategy majority", target, cons, want.low)
		}
		for i, r := range runs {
			if r.Replica != i || r.TaskID == "" || r.Label != cons.Verdicts[i] {
				t.Errorf("%s: run %d = %+v, want replica %d with a task id and label %s", target, i, r, i, cons.Verdicts[i])
			}
		}
	} else if want.labels != nil {
		t.Errorf("%s: %T has no consensus block, want verdicts %v", target, resp, want.labels)
	}
	if want.check != nil {
		want.check(t, resp)
	}
	return resp
}

// contractSummary returns the verdict, consensus block and runs of a
// response, whichever operation answered it.
func contractSummary(resp any) (router.Verdict, *router.ConsensusResponse, []router.Run) {
	switch r := resp.(type) {
	case *router.ValidateV1Response:
		return r.Verdict, nil, nil
	case *router.ValidateV2Response:
		return r.Verdict, nil, nil
	case *router.ValidateV3Response:
		return r.Verdict, &r.Consensus, r.Evidence.Runs
	case *router.FactcheckResponse:
		return r.Verdict, &r.Consensus, r.Evidence.Runs
	case *router.DelegateV3Response:
		return "", &r.Consensus, r.Evidence.Runs
	}
	return "", nil, nil
}

// jsonSame reports whether a and b hold the same JSON value; absent and
// null are the same.
func jsonSame(a json.RawMessage, b string) bool {
	decode := func(data []byte) (any, bool) {
		if len(data) == 0 {
			return nil, true
		}
		var v any
		return v, json.Unmarshal(data, &v) == nil
	}
	va, oka := decode(a)
	vb, okb := decode([]byte(b))
	return oka && okb && cmp.Equal(va, vb)
}
