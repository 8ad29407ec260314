package chatworker_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

// panelEngine builds an engine on a panel file whose sessions 1, 2 and 3
// call the fakes, one model each, in pools of their own.
func panelEngine(t *testing.T, fakes ...*fakeEndpoint) *router.Engine {
	t.Helper()
	var sessions []map[string]any
	for i, f := range fakes {
		f.model = fmt.Sprintf("model-%c", 'a'+i)
		sessions = append(sessions, map[string]any{
			"id": i + 1, "pool": f.model, "tiers": []string{"safe"},
			"worker": map[string]any{"base_url": f.baseURL(), "model": f.model, "api_key_env": "PANEL_KEY"},
		})
	}
	file, err := json.Marshal(map[string]any{
		"prices":   map[string]any{"model-a": map[string]float64{"prompt_per_1k": 1, "completion_per_1k": 2}},
		"sessions": sessions,
	})
	if err != nil {
		t.Fatal(err)
	}
	panel, err := chatworker.ParsePanel("panel.json", file, env(map[string]string{"PANEL_KEY": fakeKey}))
	if err != nil {
		t.Fatalf("ParsePanel: %v", err)
	}
	var rs []router.Session
	for _, s := range panel {
		rs = append(rs, router.Session{ID: s.ID, Worker: s.Worker, Tiers: s.Tiers, Pool: s.Pool})
	}
	e, err := router.NewEngine(rs)
	if err != nil {
		t.Fatalf("NewEngine: %v", err)
	}
	return e
}

func validateV3(policy router.DisagreementPolicy) *router.ValidateV3Request {
	job := validateJob()
	return &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{
			Claim:   *job.Claim,
			Policy:  router.ValidatePolicy{Tier: router.TierSafe, Rules: job.Rules},
			Context: job.Context,
		},
		Consensus: router.ConsensusRequest{Replicas: 3, SessionPool: []router.SessionID{1, 2, 3}, DisagreementPolicy: policy},
	}
}

// Three models judge a claim; one of them lies. The majority's verdict
// wins, and every run carries its model's evidence.
func TestEngine_ValidateV3_oneModelLies(t *testing.T) {
	honest := `{"verdict":"VALID","confidence":0.9,"reasons":["faithful"]}`
	a, b := newFake(t, content(honest)), newFake(t, content(honest))
	liar := newFake(t, content(`{"verdict":"INVALID","confidence":0.95,"reasons":["invented"]}`))
	e := panelEngine(t, a, b, liar)

	// return_all waits for every replica, so the liar's vote is recorded.
	resp, err := e.ValidateV3(t.Context(), validateV3(router.DisagreeReturnAll))
	if err != nil {
		t.Fatalf("ValidateV3: %v", err)
	}
	if resp.Verdict != router.VerdictValid || !slices.Equal(resp.Reasons, []string{"faithful"}) {
		t.Errorf("verdict, reasons = %s, %v; want VALID, [faithful]", resp.Verdict, resp.Reasons)
	}
	type run struct {
		Session router.SessionID
		Label   router.Label
		Model   string
		Usage   router.Usage
	}
	var got []run
	for _, r := range resp.Evidence.Runs {
		if r.Usage == nil || r.Configuration == nil {
			t.Fatalf("run %+v lacks usage or configuration", r)
		}
		got = append(got, run{r.SessionID, r.Label, r.Configuration.Model, *r.Usage})
	}
	slices.SortFunc(got, func(x, y run) int { return int(x.Session - y.Session) })
	want := []run{
		{1, router.Label(router.VerdictValid), "model-a", router.Usage{PromptTokens: 100, CompletionTokens: 20, Cost: (100*1 + 20*2) / 1000.0}},
		{2, router.Label(router.VerdictValid), "model-b", router.Usage{PromptTokens: 100, CompletionTokens: 20}},
		{3, router.Label(router.VerdictInvalid), "model-c", router.Usage{PromptTokens: 100, CompletionTokens: 20}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	if c := resp.Consensus; c.Replicas != 3 || c.Agreement < 0.66 || c.Agreement > 0.67 {
		t.Errorf("consensus = %+v, want 3 replicas, agreement 2/3", c)
	}
	for _, f := range []*fakeEndpoint{a, b, liar} {
		if n := len(f.reqs()); n != 1 {
			t.Errorf("%s saw %d requests, want 1", f.model, n)
		}
	}
}

// Two models agree while the third is still thinking: the engine decides
// by early quorum and cancels the third model's request, which its server
// sees.
func TestEngine_ValidateV3_earlyQuorumCancelsTheSlowestModel(t *testing.T) {
	arrived := make(chan struct{}) // the slow model has its request
	var once sync.Once
	slowest := newFake(t, func(f *fakeEndpoint, w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		slow()(f, w, r)
	})
	// The quick models answer only once the slow one is working, so that
	// there is a request in flight to cancel.
	quick := func(f *fakeEndpoint, w http.ResponseWriter, r *http.Request) {
		select {
		case <-arrived:
			content(`{"verdict":"VALID","confidence":0.9,"reasons":["faithful"]}`)(f, w, r)
		case <-f.stop:
		}
	}
	a, b := newFake(t, quick), newFake(t, quick)
	e := panelEngine(t, a, b, slowest)

	resp, err := e.ValidateV3(t.Context(), validateV3(router.DisagreeBestEffort))
	if err != nil {
		t.Fatalf("ValidateV3: %v", err)
	}
	waitClosed(t, slowest.cancelled, "the slowest model's server to see its request cancelled")
	if resp.Verdict != router.VerdictValid {
		t.Errorf("verdict = %s, want VALID", resp.Verdict)
	}
	labels := map[router.SessionID]router.Label{}
	for _, r := range resp.Evidence.Runs {
		labels[r.SessionID] = r.Label
	}
	want := map[router.SessionID]router.Label{1: "VALID", 2: "VALID", 3: router.LabelCancelled}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("run labels (-want +got):\n%s", diff)
	}
}
