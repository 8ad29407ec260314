package router_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/internal/fuzzjson"
	"github.com/vouchkit/vouch/router"
)

var (
	genSessionID = []string{`1`, `2`, `"3"`, `5`}
	genPool      = []string{`[1,2,3]`, `["1","2","3","4","5"]`, `[5,4,3,2,1]`, `[2,4]`, `[]`}
	genPolicy    = fuzzjson.Vocabulary{
		"tier": []string{`"fast"`, `"safe"`, `"oracle"`, `"balanced"`}, "redundancy": []string{`1`, `3`, `5`},
		"rules": []string{`["consistency"]`, `[]`}, "timeout_ms": []string{`5000`, `1`, `3600000`},
	}
	genConsensus = fuzzjson.Vocabulary{
		"replicas": []string{`1`, `3`, `5`}, "session_pool": genPool,
		"aggregation":         []string{`"majority"`, `"weighted"`, `"median"`, `"median_of_means"`},
		"weight_by":           []string{`"reputation"`},
		"tolerance":           fuzzjson.Vocabulary{"absolute": []string{`0`, `0.5`, `1e300`}, "relative": []string{`0`, `0.1`, `1`}},
		"disagreement_policy": []string{`"return_all"`, `"fail_hard"`, `"best_effort"`},
		"strategy":            []string{`"majority"`, `"weighted"`, `"median"`},
	}
	genInput   = []string{`"2 * 3"`, `{"a":1}`, `{"kind":"array","items":[1,2]}`}
	genContext = fuzzjson.Vocabulary{"task_input": genInput, "task_spec": []string{`"s"`, `{"s":1}`}, "dispute_context": []string{`"d"`}, "note": []string{`1`}}
	genClaim   = fuzzjson.Vocabulary{
		"type": []string{`"summary"`, `"classification"`, `"json_tool_call"`}, "description": []string{`"d"`},
		"output": []string{`"2 * 3 = 6"`, `{"a":1}`, `12345678901234567891`, `[1]`}, "input_hash": []string{`"h"`},
	}
	genExecution = fuzzjson.Vocabulary{
		"mode": []string{`"tools"`, `"simple"`, `"chain"`}, "model": []string{`"auto"`, `"m"`},
		"tools": []string{`["search"]`, `[]`}, "max_steps": []string{`1`, `10000`, `3`},
	}
	genText = []string{`"2 * 3 = 6"`, `"x"`}
)

// structRoutes are the router's POST routes with the vocabulary of
// their bodies, from docs/INTERFACE.md sections 5 and 6.
var structRoutes = []struct {
	path  string
	vocab fuzzjson.Vocabulary
}{
	{"/api/v1/delegate", fuzzjson.Vocabulary{"session_id": genSessionID, "task_request_input": genText, "task_domain": genText, "task_type": genText, "evaluation_mode": genText, "web_url": []string{`"https://example.com/a"`, `"http://x"`}}},
	{"/api/v1/validate", fuzzjson.Vocabulary{"session_id": genSessionID, "task_request_input": genText, "task_result_output": genText, "task_domain": genText, "task_type": genText, "acceptance_criteria": []string{`["accuracy"]`, `[]`}, "evaluation_mode": []string{`"llm_judge"`}}},
	{"/api/v1/factcheck", fuzzjson.Vocabulary{"claim": genText, "mode": []string{`"standard"`, `"realtime"`}, "context": genContext, "request_id": []string{`"r"`}, "session_id": genSessionID, "policy": genPolicy, "session_pool": genPool}},
	{"/api/v2/delegate", fuzzjson.Vocabulary{"session_id": genSessionID, "objective": genText, "input": genInput, "execution": genExecution, "policy": genPolicy, "tools": []string{`[1]`}, "workflow": []string{`{}`}, "metadata": []string{`{"m":1}`}}},
	{"/api/v2/validate", fuzzjson.Vocabulary{"session_id": genSessionID, "request_id": []string{`"r"`}, "claim": genClaim, "policy": genPolicy, "context": genContext, "actor": []string{`{"a":1}`}, "metadata": []string{`{}`}}},
	{"/api/v3/delegate", fuzzjson.Vocabulary{"session_id": genSessionID, "objective": genText, "input": genInput, "execution": genExecution, "policy": genPolicy, "tools": []string{`[1]`}, "workflow": []string{`{}`}, "metadata": []string{`{"m":1}`}, "consensus": genConsensus}},
	{"/api/v3/validate", fuzzjson.Vocabulary{"session_id": genSessionID, "request_id": []string{`"r"`}, "claim": genClaim, "policy": genPolicy, "context": genContext, "actor": []string{`{"a":1}`}, "metadata": []string{`{}`}, "consensus": genConsensus}},
	{"/api/v3/factcheck", fuzzjson.Vocabulary{"claim": genText, "mode": []string{`"standard"`, `"realtime"`}, "context": genContext, "request_id": []string{`"r"`}, "session_id": genSessionID, "policy": genPolicy, "consensus": genConsensus}},
	{"/api/v2/trial/validate", fuzzjson.Vocabulary{"session_id": genSessionID, "claim": genClaim, "policy": genPolicy}},
	{"/api/v1/x402/factcheck", fuzzjson.Vocabulary{"claim": genText, "policy": genPolicy, "session_pool": genPool}},
	{"/api/v3/feedback", fuzzjson.Vocabulary{"trace_id": []string{`"4bf92f3577b34da6a3ce929d0e0e4736"`}, "right": []string{`true`, `false`}}},
}

// splitWorker answers by a hash of the job and its session, so that
// sessions disagree now and then: verdicts of every kind, and numbers or
// text for a delegation. It never fails.
func splitWorker(session int) router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		h := fnv.New32a()
		fmt.Fprintf(h, "%d|%s|%s|%v|%s", session, job.Kind, job.Statement, job.Claim != nil, job.Objective)
		n := h.Sum32()
		switch job.Kind {
		case router.KindDelegate:
			outs := []any{42, 42, 43, "text", map[string]any{"a": 1}, 42.0000001}
			return &router.Result{Output: outs[n%uint32(len(outs))], Confidence: 0.9}, nil
		case router.KindFactcheck:
			v := []router.Verdict{router.VerdictTrue, router.VerdictTrue, router.VerdictFalse}[n%3]
			return &router.Result{Verdict: v, Confidence: 0.8, Reasons: []string{"split"}}, nil
		}
		v := []router.Verdict{router.VerdictValid, router.VerdictValid, router.VerdictInvalid, router.VerdictRetry, router.VerdictNeedsSpec}[n%5]
		return &router.Result{Verdict: v, Confidence: 0.8, Reasons: []string{"split"}}, nil
	})
}

// FuzzEngineHandlerStruct builds each body from the fuzzer's bytes with
// fuzzjson.Generator over the route's own members, so that every input is valid
// JSON and most reach the engine, whose five sessions disagree now and
// then. The answer is checked as FuzzEngineHandler checks it.
func FuzzEngineHandlerStruct(f *testing.F) {
	for i := range structRoutes {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte(strings.Repeat("\x01", 64)))
		f.Add(uint8(i), []byte(strings.Repeat("\x02\x01\x00", 40)))
	}
	var ss []router.Session
	for i := 1; i <= 5; i++ {
		ss = append(ss, router.Session{ID: router.SessionID(i), Worker: splitWorker(i), Pool: fmt.Sprint("pool-", i%3)})
	}
	e, err := router.NewEngine(ss)
	if err != nil {
		f.Fatal(err)
	}
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "k"})),
		router.WithRateLimiter(allowAll{}),
		router.WithX402(func(next http.Handler) http.Handler { return next }))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, route uint8, data []byte) {
		rt := structRoutes[int(route)%len(structRoutes)]
		g := fuzzjson.New(data)
		body := []byte(g.Object(rt.vocab))
		r := httptest.NewRequest(http.MethodPost, rt.path, strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if testing.Verbose() {
			t.Logf("%s %s -> %d %.300s", rt.path, body, w.Code, w.Body)
		}
		fuzzjson.CheckAnswer(t, w, rt.path, body)
	})
}
