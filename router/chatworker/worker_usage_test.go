package chatworker_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

// TestWorker_Work_usageAsSent checks that a result's usage is what the
// endpoint reported: none when the reply has no usage, or a null one, as
// some servers send; zero tokens spent is not what they said.
func TestWorker_Work_usageAsSent(t *testing.T) {
	const answer = `{"verdict":"VALID","confidence":0.9,"reasons":[]}`
	tests := []struct {
		name  string
		usage string // the reply's usage member, or empty for none
		want  *router.Usage
	}{
		{name: "absent", want: nil},
		{name: "null", usage: `,"usage":null`, want: nil},
		{
			name:  "with members the worker does not read",
			usage: `,"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":2}}`,
			want:  &router.Usage{PromptTokens: 7, CompletionTokens: 3, Cost: 7*0.5/1000 + 3*1.5/1000},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content, err := json.Marshal(answer)
			if err != nil {
				t.Fatal(err)
			}
			f := newFake(t, rawBody(200, `{"model":"`+fakeModel+`","choices":[{"index":0,"message":{"role":"assistant","content":`+
				string(content)+`},"finish_reason":"stop"}]`+tt.usage+`}`))
			w := newWorker(t, f, func(c *chatworker.Config) { c.DisableLogprobs = true })
			got, err := w.Work(t.Context(), validateJob())
			if err != nil {
				t.Fatalf("Work: %v", err)
			}
			if diff := cmp.Diff(tt.want, got.Usage); diff != "" {
				t.Errorf("Usage (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEngine_ValidateV3_unreadableReplyKeepsItsUsage: a reply the worker
// cannot read (no answer in it, a refusal, a judgement cut before its
// verdict) is an ERROR run, and the tokens the endpoint reported spending
// on it are that run's usage and count in evidence.usage, as the usage of
// failed runs does.
func TestEngine_ValidateV3_unreadableReplyKeepsItsUsage(t *testing.T) {
	valid := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`))
	prose := newFake(t, content("The summary looks fine to me."))
	refused := newFake(t, refusal("I can't help with that."))
	e, err := router.NewEngine([]router.Session{
		{ID: 1, Worker: newWorker(t, valid, nil)},
		{ID: 2, Worker: newWorker(t, prose, nil)},
		{ID: 3, Worker: newWorker(t, refused, nil)},
	}, router.WithReputation(nil))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.ValidateV3(t.Context(), &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"The sky is blue."`)}},
		Consensus:    router.ConsensusRequest{Replicas: 3, SessionPool: []router.SessionID{1, 2, 3}, DisagreementPolicy: router.DisagreeReturnAll},
	})
	if err != nil {
		t.Fatalf("ValidateV3: %v", err)
	}
	refusedUsage := &router.Usage{PromptTokens: 100, CompletionTokens: 5, Cost: 100*0.5/1000 + 5*1.5/1000}
	type run struct {
		Session router.SessionID
		Label   router.Label
		Usage   *router.Usage
	}
	var got []run
	for _, r := range resp.Evidence.Runs {
		got = append(got, run{r.SessionID, r.Label, r.Usage})
	}
	want := []run{
		{1, router.Label(router.VerdictValid), usage},
		{2, router.LabelError, usage},
		{3, router.LabelError, refusedUsage},
	}
	sort := cmpopts.SortSlices(func(a, b run) bool { return a.Session < b.Session })
	if diff := cmp.Diff(want, got, sort); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
	total := &router.Usage{PromptTokens: 300, CompletionTokens: 45, Cost: 2*usage.Cost + refusedUsage.Cost}
	if diff := cmp.Diff(total, resp.Evidence.Usage, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("evidence.usage (-want +got):\n%s", diff)
	}
}
