package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// checkAltered serves the answer of call, as the engine gives it and
// changed by alter, and checks what the Client makes of it: no error when
// want is empty, otherwise an error wrapping ErrMalformedResponse that
// names want.
func checkAltered(t *testing.T, call func(context.Context, router.Service) (any, error), alter func(map[string]any), want string) {
	t.Helper()
	m := answerOf(t, call)
	alter(m)
	body, _ := json.Marshal(m)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	_, err := call(t.Context(), newTestClient(t, srv.URL))
	switch {
	case want == "" && err != nil:
		t.Errorf("an answer within the contract: %v", err)
	case want != "" && (!errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), want)):
		t.Errorf("error %v, want ErrMalformedResponse naming %q", err, want)
	}
}

// answerOf returns what a router's Engine answers to req on three
// sessions that know multiplication, as a JSON object to alter.
func answerOf(t *testing.T, call func(context.Context, router.Service) (any, error)) map[string]any {
	t.Helper()
	var ss []router.Session
	for id := range 3 {
		ss = append(ss, router.Session{ID: router.SessionID(id + 1), Worker: routertest.Arithmetic()})
	}
	e, err := router.NewEngine(ss)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := call(t.Context(), e)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(resp)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m
}

// A version 3 or fact-check answer that breaks the contract is refused as
// malformed, naming what is wrong, rather than handed to a caller (a trust
// service) that would state a verdict of its own from it.
func TestClient_refusesAnswersOutsideTheContract(t *testing.T) {
	validate := func(ctx context.Context, s router.Service) (any, error) {
		req := &router.ValidateV3Request{Consensus: router.ConsensusRequest{Replicas: 3}}
		req.Claim = router.Claim{Type: "math", Output: json.RawMessage(`"2 * 3 = 6"`)}
		return s.ValidateV3(ctx, req)
	}
	factcheck := func(ctx context.Context, s router.Service) (any, error) {
		return s.Factcheck(ctx, &router.FactcheckRequest{Claim: "2 * 3 = 6", Consensus: router.ConsensusRequest{Replicas: 3}})
	}
	delegate := func(ctx context.Context, s router.Service) (any, error) {
		return s.DelegateV3(ctx, &router.DelegateV3Request{DelegateTask: router.DelegateTask{Objective: "multiply", Input: router.NewStringInput("What is 6 * 7?")},
			Consensus: router.ConsensusRequest{Replicas: 3}})
	}
	run := func(m map[string]any, i int) map[string]any {
		return m["evidence"].(map[string]any)["runs"].([]any)[i].(map[string]any)
	}
	for _, tc := range []struct {
		name  string
		call  func(context.Context, router.Service) (any, error)
		alter func(m map[string]any)
		want  string // "" for an answer within the contract
	}{
		{"as answered", validate, func(map[string]any) {}, ""},
		{"a run's confidence above 1", validate, func(m map[string]any) { run(m, 0)["confidence"] = 2 }, "evidence.runs[0]: confidence 2"},
		{"a run's label unknown", validate, func(m map[string]any) { run(m, 1)["label"] = "BOGUS" }, `evidence.runs[1]: label "BOGUS"`},
		{"a replica twice", validate, func(m map[string]any) { run(m, 2)["replica"] = 0 }, "evidence.runs[2]: replica 0"},
		{"a reliability above 1", validate, func(m map[string]any) { run(m, 0)["reliability"] = 1.5 }, "reliability 1.5"},
		{"a negative weight", validate, func(m map[string]any) { run(m, 0)["weight"] = -1 }, "weight -1"},
		{"a verdict of another kind", validate, func(m map[string]any) { m["verdict"] = "TRUE" }, `verdict "TRUE"`},
		{"a negative confidence", validate, func(m map[string]any) { m["confidence"] = -0.5 }, "confidence -0.5"},
		{"a consensus label unknown", validate, func(m map[string]any) {
			m["consensus"].(map[string]any)["verdicts"].([]any)[0] = "MAYBE"
		}, `consensus.verdicts[0]: "MAYBE"`},
		{"an agreeing replica out of range", validate, func(m map[string]any) {
			m["consensus"].(map[string]any)["agreeing"] = []int{0, 1, 5}
		}, "consensus.agreeing[2]: replica 5"},
		{"fact check as answered", factcheck, func(map[string]any) {}, ""},
		{"a fact check answered VALID", factcheck, func(m map[string]any) { m["verdict"] = "VALID" }, `verdict "VALID" is not a verdict of factcheck`},
		{"delegation as answered", delegate, func(map[string]any) {}, ""},
		{"a delegation's run labelled VALID", delegate, func(m map[string]any) { run(m, 0)["label"] = "VALID" }, `evidence.runs[0]: label "VALID"`},
	} {
		t.Run(tc.name, func(t *testing.T) { checkAltered(t, tc.call, tc.alter, tc.want) })
	}
}
