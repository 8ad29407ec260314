package router_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/internal/fuzzjson"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// fuzzWorker answers every job the way a healthy worker does: a number
// for a delegation, VALID for a validation, TRUE for a fact check. It
// never fails, so an engine of fuzzWorkers never has a server-side
// reason for a 5xx.
func fuzzWorker() router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		switch job.Kind {
		case router.KindDelegate:
			return &router.Result{Output: 42, Confidence: 0.9, Steps: []router.Step{{Description: "fuzz"}}}, nil
		case router.KindFactcheck:
			return &router.Result{Verdict: router.VerdictTrue, Confidence: 0.9, Reasons: []string{"fuzz"}}, nil
		}
		return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"fuzz"}}, nil
	})
}

// FuzzEngineHandler sends arbitrary bodies to every POST route of the
// router's Handler over a real Engine of five healthy sessions (three
// pools): unlike FuzzHandler, whose service answers everything, the
// bodies here reach the engine's selection, consensus and numeric
// logic.
func FuzzEngineHandler(f *testing.F) {
	claim := `"claim":{"type":"summary","output":"x"}`
	seeds := []struct {
		path, body string
	}{
		{"/api/v1/delegate", `{"session_id":1,"task_request_input":"2 * 3"}`},
		{"/api/v1/delegate", `{"session_id":"2","task_request_input":"x","task_domain":"d","task_type":"t","evaluation_mode":"e","web_url":"https://example.com/a"}`},
		{"/api/v1/validate", `{"session_id":1,"task_request_input":"x","task_result_output":"y","acceptance_criteria":["accuracy","non_hallucination"],"evaluation_mode":"llm_judge"}`},
		{"/api/v1/factcheck", `{"claim":"the sky is blue"}`},
		{"/api/v1/factcheck", `{"claim":"c","mode":"realtime","context":{"a":1},"request_id":"r1","session_id":2,"policy":{"tier":"safe","rules":["consistency"],"timeout_ms":5000,"redundancy":5},"session_pool":[1,2,3,4,5]}`},
		{"/api/v1/fact-check", `{"claim":"c","policy":{"redundancy":3}}`},
		{"/api/v2/delegate", `{"session_id":1,"objective":"o","input":{"kind":"array","items":[1,2]},"execution":{"mode":"tools","model":"auto","tools":["search"],"max_steps":3},"policy":{"tier":"fast","timeout_ms":5000,"redundancy":1,"rules":["r"]},"tools":[1],"workflow":{},"metadata":{"m":1}}`},
		{"/api/v2/delegate", `{"session_id":1,"objective":"o","input":"text"}`},
		{"/api/v2/validate", `{"session_id":1,"request_id":"r",` + claim + `,"policy":{"tier":"safe","redundancy":3,"rules":["consistency"],"timeout_ms":5000},"context":{"task_input":{"kind":"array","items":[1]},"task_spec":"s","dispute_context":"d"},"actor":{"a":1},"metadata":{}}`},
		{"/api/v2/validate", `{"session_id":1,"claim":{"type":"json_tool_call","description":"d","output":{"a":1},"input_hash":"h"}}`},
		{"/api/v3/delegate", `{"objective":"o","consensus":{"replicas":3,"session_pool":["1","2","3"]}}`},
		{"/api/v3/delegate", `{"objective":"o","consensus":{"replicas":5,"aggregation":"median","tolerance":{"absolute":0.5,"relative":0.1},"weight_by":"reputation"}}`},
		{"/api/v3/delegate", `{"objective":"o","consensus":{"replicas":3,"aggregation":"median_of_means","disagreement_policy":"return_all"}}`},
		{"/api/v3/delegate", `{"session_id":2,"objective":"o","consensus":{"replicas":1,"strategy":"majority"},"policy":{"redundancy":5}}`},
		{"/api/v3/validate", `{` + claim + `,"consensus":{"replicas":3,"aggregation":"weighted","weight_by":"reputation","disagreement_policy":"fail_hard"}}`},
		{"/api/v3/validate", `{` + claim + `,"consensus":{"replicas":5,"session_pool":[5,4,3,2,1]},"policy":{"tier":"oracle","timeout_ms":1}}`},
		{"/api/v3/validate", `{` + claim + `,"session_pool":[1],"consensus":{"replicas":3}}`},
		{"/api/v3/factcheck", `{"claim":"c","mode":"standard","consensus":{"replicas":3,"aggregation":"weighted"}}`},
		{"/api/v3/factcheck", `{"claim":"c","request_id":"x","session_id":1,"context":{},"policy":{"tier":"safe"},"consensus":{"replicas":5,"disagreement_policy":"best_effort"}}`},
		{"/api/v3/feedback", `{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","right":false}`},
		{"/api/v3/feedback", `{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","verdict":"INVALID"}`},
		{"/api/v1/x402/validate", `{"session_id":1,"task_request_input":"x","task_result_output":"y"}`},
		{"/api/v2/trial/delegate", `{"session_id":1,"objective":"o"}`},
	}
	var posts []string
	for _, rt := range router.Routes() {
		if rt.Method == http.MethodPost {
			posts = append(posts, rt.Path)
		}
	}
	index := func(path string) uint8 {
		for i, p := range posts {
			if p == path {
				return uint8(i)
			}
		}
		f.Fatalf("no POST route %s", path)
		return 0
	}
	for _, s := range seeds {
		f.Add(index(s.path), []byte(s.body))
	}
	h := engineHandler(f)
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		path := posts[int(route)%len(posts)]
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code == http.StatusTooManyRequests && strings.Contains(path, "/trial/") {
			return
		}
		if testing.Verbose() {
			t.Logf("%s %d %.300s", path, w.Code, w.Body)
		}
		fuzzjson.CheckAnswer(t, w, path, body)
	})
}

// allowAll lets every trial call through, so that the fuzzer reaches the
// trial routes' logic rather than their rate limit.
type allowAll struct{}

func (allowAll) Allow(context.Context, string, time.Time) (bool, time.Duration, error) {
	return true, 0, nil
}

// engineHandler returns the router Handler of FuzzEngineHandler: five
// fuzzWorker sessions in three pools, the key "k", trial calls unlimited
// and x402 routes let through.
func engineHandler(t testing.TB) http.Handler {
	var workers []router.Worker
	for range 5 {
		workers = append(workers, fuzzWorker())
	}
	e, err := router.NewEngine(routertest.Sessions(1, 3, workers...))
	if err != nil {
		t.Fatal(err)
	}
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "k"})),
		router.WithMaxBodyBytes(1<<16),
		router.WithRateLimiter(allowAll{}),
		router.WithX402(func(next http.Handler) http.Handler { return next }))
	if err != nil {
		t.Fatal(err)
	}
	return h
}
