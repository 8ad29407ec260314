package router_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

func TestEngine_Factcheck(t *testing.T) {
	T := routertest.Verdict(router.VerdictTrue)
	F := routertest.Verdict(router.VerdictFalse)
	rec := routertest.NewRecorder(T)
	e := newEngine(t, routertest.Sessions(1, 3, rec, routertest.Verdict(valid), F, T))
	req := &router.FactcheckRequest{
		Claim:     "water boils at 100 C at sea level",
		Consensus: router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeReturnAll},
	}
	got, err := e.Factcheck(context.Background(), req)
	if err != nil {
		t.Fatalf("Factcheck: %v", err)
	}
	// Session 2 answers VALID, which a fact check does not take: ERROR.
	want := []router.Label{router.Label(router.VerdictTrue), lE, router.Label(router.VerdictFalse)}
	if got.Verdict != "" || !cmp.Equal(got.Consensus.Verdicts, want) {
		t.Errorf("verdict %q, verdicts %v; want no verdict (a tie) and %v", got.Verdict, got.Consensus.Verdicts, want)
	}
	j := rec.Jobs()[0]
	if j.Kind != router.KindFactcheck || j.Statement != req.Claim || j.FactcheckMode != router.FactcheckStandard {
		t.Errorf("job = %+v, want a factcheck of the claim in standard mode", j)
	}

	req.Consensus.SessionPool = []router.SessionID{1, 3, 4}
	got, err = e.Factcheck(context.Background(), req)
	if err != nil {
		t.Fatalf("Factcheck: %v", err)
	}
	if got.Verdict != router.VerdictTrue {
		t.Errorf("verdict = %q, want TRUE (2 of 3)", got.Verdict)
	}
}

func TestEngine_FactcheckV1(t *testing.T) {
	T := routertest.Verdict(router.VerdictTrue)
	recs := []*routertest.Recorder{routertest.NewRecorder(T), routertest.NewRecorder(T), routertest.NewRecorder(T),
		routertest.NewRecorder(routertest.Hang()), routertest.NewRecorder(routertest.Hang())}
	ws := make([]router.Worker, len(recs))
	for i, r := range recs {
		ws[i] = r
	}
	e := newEngine(t, routertest.Sessions(1, 5, ws...))
	ctx := context.Background()

	req := &router.FactcheckV1Request{Claim: "water is wet", Mode: router.FactcheckRealtime, SessionPool: []router.SessionID{1, 2, 3}}
	got, err := e.FactcheckV1(ctx, req)
	if err != nil {
		t.Fatalf("FactcheckV1: %v", err)
	}
	if got.Verdict != router.VerdictTrue || got.Consensus.Replicas != 3 || len(got.Evidence.Runs) != 3 {
		t.Errorf("response %+v, want TRUE from 3 replicas (the default redundancy)", got)
	}
	j := recs[0].Jobs()[0]
	if j.Kind != router.KindFactcheck || j.Version != 1 || j.Statement != req.Claim || j.FactcheckMode != router.FactcheckRealtime {
		t.Errorf("job = %+v, want a version 1 factcheck of the claim in realtime mode", j)
	}

	// Redundancy 5: three answers decide, the two hung replicas are cut.
	req = &router.FactcheckV1Request{Claim: "c", Policy: router.ValidatePolicy{Redundancy: 5}}
	if got, err = e.FactcheckV1(ctx, req); err != nil {
		t.Fatalf("FactcheckV1 with redundancy 5: %v", err)
	}
	if got.Consensus.Replicas != 5 || got.Verdict != router.VerdictTrue {
		t.Errorf("response %+v, want TRUE from 5 replicas", got)
	}
	if j := recs[1].Jobs()[1]; j.FactcheckMode != router.FactcheckStandard {
		t.Errorf("mode %q, want standard when the request sets none", j.FactcheckMode)
	}

	// Errors name the members of a version 1 request.
	_, err = e.FactcheckV1(ctx, &router.FactcheckV1Request{Claim: "c", SessionPool: []router.SessionID{1, 9, 2}})
	if p := asError(t, err, http.StatusBadRequest, "invalid_request"); len(p.Errors) != 1 || p.Errors[0].Field != "session_pool[1]" {
		t.Errorf("unknown pool member: field errors %+v, want session_pool[1]", p.Errors)
	}
	_, err = e.FactcheckV1(ctx, &router.FactcheckV1Request{Claim: "c", SessionPool: []router.SessionID{1, 2}})
	if p := asError(t, err, http.StatusBadRequest, "invalid_request"); len(p.Errors) != 1 || p.Errors[0].Field != "policy.redundancy" || !strings.Contains(p.Detail, "session_pool") {
		t.Errorf("field errors %+v, detail %q: want policy.redundancy, naming session_pool", p.Errors, p.Detail)
	}
	if _, err := e.FactcheckV1(ctx, nil); err == nil {
		t.Error("FactcheckV1(nil) succeeded")
	}
}
