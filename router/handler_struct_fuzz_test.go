package router_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// jsonGen builds a syntactically valid JSON body from fuzz bytes: each
// member of a vocabulary is left out, given one of its usual values, or
// given an odd value (null, "", white space, 0, negative, huge, 1e400,
// a lone surrogate, the wrong type), so that the fuzzer explores
// combinations of members and values rather than JSON syntax.
type jsonGen struct {
	data []byte
	i    int
}

func (g *jsonGen) next() int {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return int(b)
}

// genObj is a vocabulary: member name to genObj (a nested object) or
// []string (its usual values, as JSON text).
type genObj map[string]any

var oddValues = []string{
	`null`, `""`, `"  "`, `"x"`, `0`, `-1`, `1`, `2`, `3`, `5`, `7`, `1.5`, `-0`, `1e400`, `-1e400`,
	`99999999999999999999`, `true`, `false`, `[]`, `{}`, `[""]`, `[1,1]`, `["1","2"]`, `[0]`, `[null]`,
	`{"kind":"array","items":[]}`, `{"kind":"array"}`, `"\ud800"`, `"NaN"`, `"1"`, `"0"`, `" x "`,
	`"VALID"`, `"INVALID"`, `"number"`, `{"a":1e400}`, `[[[]]]`, `"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"`,
	`"4bf92f3577b34da6a3ce929d0e0e4736"`,
}

func (g *jsonGen) value(v any, depth int) string {
	c := g.next() % 8
	switch {
	case c == 7 || depth > 4:
		return oddValues[g.next()%len(oddValues)]
	}
	switch v := v.(type) {
	case genObj:
		return g.object(v, depth+1)
	case []string:
		return v[g.next()%len(v)]
	}
	return `null`
}

func (g *jsonGen) object(o genObj, depth int) string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	for _, k := range keys {
		if g.next()%3 == 0 {
			continue // absent
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(strconv.Quote(k))
		b.WriteByte(':')
		b.WriteString(g.value(o[k], depth))
	}
	if g.next()%16 == 15 { // now and then a member the route does not define
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"extra":1`)
	}
	b.WriteByte('}')
	return b.String()
}

var (
	genSessionID = []string{`1`, `2`, `"3"`, `5`}
	genPool      = []string{`[1,2,3]`, `["1","2","3","4","5"]`, `[5,4,3,2,1]`, `[2,4]`, `[]`}
	genPolicy    = genObj{
		"tier": []string{`"fast"`, `"safe"`, `"oracle"`, `"balanced"`}, "redundancy": []string{`1`, `3`, `5`},
		"rules": []string{`["consistency"]`, `[]`}, "timeout_ms": []string{`5000`, `1`, `3600000`},
	}
	genConsensus = genObj{
		"replicas": []string{`1`, `3`, `5`}, "session_pool": genPool,
		"aggregation":         []string{`"majority"`, `"weighted"`, `"median"`, `"median_of_means"`},
		"weight_by":           []string{`"reputation"`},
		"tolerance":           genObj{"absolute": []string{`0`, `0.5`, `1e300`}, "relative": []string{`0`, `0.1`, `1`}},
		"disagreement_policy": []string{`"return_all"`, `"fail_hard"`, `"best_effort"`},
		"strategy":            []string{`"majority"`, `"weighted"`, `"median"`},
	}
	genInput   = []string{`"2 * 3"`, `{"a":1}`, `{"kind":"array","items":[1,2]}`}
	genContext = genObj{"task_input": genInput, "task_spec": []string{`"s"`, `{"s":1}`}, "dispute_context": []string{`"d"`}, "note": []string{`1`}}
	genClaim   = genObj{
		"type": []string{`"summary"`, `"classification"`, `"json_tool_call"`}, "description": []string{`"d"`},
		"output": []string{`"2 * 3 = 6"`, `{"a":1}`, `12345678901234567891`, `[1]`}, "input_hash": []string{`"h"`},
	}
	genExecution = genObj{
		"mode": []string{`"tools"`, `"simple"`, `"chain"`}, "model": []string{`"auto"`, `"m"`},
		"tools": []string{`["search"]`, `[]`}, "max_steps": []string{`1`, `10000`, `3`},
	}
	genText = []string{`"2 * 3 = 6"`, `"x"`}
)

// structRoutes are the router's POST routes with the vocabulary of
// their bodies, from docs/INTERFACE.md sections 5 and 6.
var structRoutes = []struct {
	path  string
	vocab genObj
}{
	{"/api/v1/delegate", genObj{"session_id": genSessionID, "task_request_input": genText, "task_domain": genText, "task_type": genText, "evaluation_mode": genText, "web_url": []string{`"https://example.com/a"`, `"http://x"`}}},
	{"/api/v1/validate", genObj{"session_id": genSessionID, "task_request_input": genText, "task_result_output": genText, "task_domain": genText, "task_type": genText, "acceptance_criteria": []string{`["accuracy"]`, `[]`}, "evaluation_mode": []string{`"llm_judge"`}}},
	{"/api/v1/factcheck", genObj{"claim": genText, "mode": []string{`"standard"`, `"realtime"`}, "context": genContext, "request_id": []string{`"r"`}, "session_id": genSessionID, "policy": genPolicy, "session_pool": genPool}},
	{"/api/v2/delegate", genObj{"session_id": genSessionID, "objective": genText, "input": genInput, "execution": genExecution, "policy": genPolicy, "tools": []string{`[1]`}, "workflow": []string{`{}`}, "metadata": []string{`{"m":1}`}}},
	{"/api/v2/validate", genObj{"session_id": genSessionID, "request_id": []string{`"r"`}, "claim": genClaim, "policy": genPolicy, "context": genContext, "actor": []string{`{"a":1}`}, "metadata": []string{`{}`}}},
	{"/api/v3/delegate", genObj{"session_id": genSessionID, "objective": genText, "input": genInput, "execution": genExecution, "policy": genPolicy, "tools": []string{`[1]`}, "workflow": []string{`{}`}, "metadata": []string{`{"m":1}`}, "consensus": genConsensus}},
	{"/api/v3/validate", genObj{"session_id": genSessionID, "request_id": []string{`"r"`}, "claim": genClaim, "policy": genPolicy, "context": genContext, "actor": []string{`{"a":1}`}, "metadata": []string{`{}`}, "consensus": genConsensus}},
	{"/api/v3/factcheck", genObj{"claim": genText, "mode": []string{`"standard"`, `"realtime"`}, "context": genContext, "request_id": []string{`"r"`}, "session_id": genSessionID, "policy": genPolicy, "consensus": genConsensus}},
	{"/api/v2/trial/validate", genObj{"session_id": genSessionID, "claim": genClaim, "policy": genPolicy}},
	{"/api/v1/x402/factcheck", genObj{"claim": genText, "policy": genPolicy, "session_pool": genPool}},
	{"/api/v3/feedback", genObj{"trace_id": []string{`"4bf92f3577b34da6a3ce929d0e0e4736"`}, "right": []string{`true`, `false`}}},
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
// jsonGen over the route's own members, so that every input is valid
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
		g := &jsonGen{data: data}
		body := []byte(g.object(rt.vocab, 0))
		r := httptest.NewRequest(http.MethodPost, rt.path, strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if testing.Verbose() {
			t.Logf("%s %s -> %d %.300s", rt.path, body, w.Code, w.Body)
		}
		checkAnswer(t, w, rt.path, body)
	})
}
