package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// The contract suite: one table of cases (contractCases, in
// contract_cases_test.go), each run on a fresh Engine through every target
// that serves its operation (contractTargets, in contract_targets_test.go):
// the Engine in-process, and Client → Handler → Engine over loopback in
// each variant the operation has (normal, trial, and x402 paying through
// x402.Transport), by the alias path where the route has one
// (/api/v1/fact-check), and with session ids sent as strings. Every
// target's answer must meet the case's want, and all answers must be equal
// under go-cmp apart from transport metadata (contractOpts).
//
// To add an operation, add cases whose call is built by contractCall; to
// add a way of running the contract, add a target.

// contractCase is one row of the suite.
type contractCase struct {
	name string
	// workers run sessions 1, 2, ... in pools of their own, so that replica
	// i of a first version 3 call runs on worker i. They must be stateless
	// and safe for concurrent use: each target gets a fresh engine over the
	// same workers, each wrapped in a fresh Recorder, and the targets call
	// at once.
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
	// strategy is consensus.strategy; empty means majority.
	strategy router.Aggregation
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
			// Every target gets a fresh engine over the case's workers,
			// each wrapped in a fresh Recorder. The calls run at once, so
			// that the cases whose hung replicas run to their deadline wait
			// for it once, not once per target; each target is checked
			// once every call has returned.
			type run struct {
				name  string
				recs  []*routertest.Recorder
				svc   router.Service
				after func(*testing.T, error)
				resp  any
				err   error
			}
			var runs []*run
			for _, tg := range contractTargets() {
				if !tg.serves(tc.call.op) {
					continue
				}
				r := &run{name: tg.name, recs: make([]*routertest.Recorder, len(tc.workers))}
				ws := make([]router.Worker, len(tc.workers))
				for i, w := range tc.workers {
					r.recs[i] = routertest.NewRecorder(w)
					ws[i] = r.recs[i]
				}
				sessions := routertest.Sessions(1, len(ws), ws...)
				if tc.sessions != nil {
					sessions = tc.sessions(ws)
				}
				e, err := router.NewEngine(sessions)
				if err != nil {
					t.Fatal(err)
				}
				r.svc, r.after = tg.serve(t, e)
				runs = append(runs, r)
			}
			var wg sync.WaitGroup
			for _, r := range runs {
				wg.Go(func() { r.resp, r.err = tc.call.do(context.Background(), r.svc) })
			}
			wg.Wait()
			var answers []any
			var names []string
			for _, r := range runs {
				answer := checkContract(t, r.name, tc.want, r.resp, r.err, r.recs)
				if r.after != nil {
					r.after(t, r.err)
				}
				answers, names = append(answers, answer), append(names, r.name)
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
		strategy := want.strategy
		if strategy == "" {
			strategy = router.AggregationMajority
		}
		if cons.LowConfidence != want.low || cons.Strategy != strategy {
			t.Errorf("%s: consensus = %+v, want low_confidence %v and strategy %s", target, cons, want.low, strategy)
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
