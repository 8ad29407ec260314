package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

func TestEngine_DelegateV3(t *testing.T) {
	step := func(s string) []router.Step { return []router.Step{{Description: s}} }
	a := routertest.Fixed(router.Result{Output: "hello  world", Steps: step("a"), Tools: []string{"t"}})
	b := routertest.Fixed(router.Result{Output: " hello world\n", Steps: step("b")})
	c := routertest.Fixed(router.Result{Output: "bye", Steps: step("c")})
	e := newEngine(t, routertest.Sessions(1, 3, c, a, b))
	req := &router.DelegateV3Request{
		DelegateTask: router.DelegateTask{Objective: "greet", Policy: router.Policy{Tier: router.TierSafe}},
		Consensus:    router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeReturnAll},
	}
	got, err := e.DelegateV3(context.Background(), req)
	if err != nil {
		t.Fatalf("DelegateV3: %v", err)
	}
	// Replicas 1 and 2 agree once white space is folded; the result is
	// the output of the group's first run, replica 1.
	if string(got.Result) != `"hello  world"` {
		t.Errorf("result = %s, want replica 1's output", got.Result)
	}
	if !cmp.Equal(got.Evidence.Steps, step("a")) || !cmp.Equal(got.Evidence.Tools, []string{"t"}) ||
		got.Evidence.Configuration.Tier != router.TierSafe {
		t.Errorf("evidence = %+v, want replica 1's steps, tools and configuration", got.Evidence)
	}
	if got.TaskID == "" || len(got.Evidence.Runs) != 3 || string(got.Evidence.Runs[0].Output) != `"bye"` {
		t.Errorf("response = %+v, want a task id and three runs with their outputs", got)
	}
	if want := []router.Label{router.LabelOK, router.LabelOK, router.LabelOK}; !cmp.Equal(got.Consensus.Verdicts, want) ||
		math.Abs(got.Consensus.Agreement-2.0/3) > 1e-9 || !got.Consensus.LowConfidence {
		t.Errorf("consensus = %+v, want three OK, agreement 2/3, low confidence", got.Consensus)
	}

	// A host key that sees every output as the same answer.
	e = newEngine(t, routertest.Sessions(1, 3, c, a, b), router.WithAnswerKey(func(any) (string, error) { return "", nil }))
	got, err = e.DelegateV3(context.Background(), req)
	if err != nil {
		t.Fatalf("DelegateV3 with a host key: %v", err)
	}
	if got.Consensus.Agreement != 1 || string(got.Result) != `"bye"` {
		t.Errorf("with a key equating all: agreement %v, result %s; want 1 and replica 0's output", got.Consensus.Agreement, got.Result)
	}

	// A key that fails.
	e = newEngine(t, routertest.Sessions(1, 3, c, a, b), router.WithAnswerKey(func(any) (string, error) { return "", errors.New("bad") }))
	_, err = e.DelegateV3(context.Background(), req)
	asError(t, err, http.StatusInternalServerError, "internal")
}

func TestEngine_DelegateV3_noWinner(t *testing.T) {
	E := routertest.Fail(errDown)
	e := newEngine(t, routertest.Sessions(1, 3, E, E, E))
	req := &router.DelegateV3Request{
		DelegateTask: router.DelegateTask{Objective: "greet"},
		Consensus:    router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeReturnAll},
	}
	got, err := e.DelegateV3(context.Background(), req)
	if err != nil {
		t.Fatalf("DelegateV3: %v", err)
	}
	if string(got.Result) != "null" || got.Evidence.Steps == nil || !got.Consensus.LowConfidence {
		t.Errorf("response = %+v, want a null result, empty evidence lists, low confidence", got)
	}
	if _, err := json.Marshal(got); err != nil {
		t.Errorf("response does not encode: %v", err)
	}
}
